"""LightGBM's native API without its optional scikit-learn and pandas layers (a start-up cost, not a
feature).

``import lightgbm`` imports scikit-learn, which imports ``scipy.stats`` and pandas, for the
``LGBMClassifier`` wrappers and DataFrame inputs spcl never uses: ≈ 4 s of a Python worker's ≈ 6 s
start-up on this machine, paid by every Spark Python worker and by the driver.
:func:`import_lightgbm` imports it with those two packages hidden (lightgbm then treats them as
absent) and restores them at once, so a later ``import sklearn`` anywhere works as usual.
``Booster``, ``Dataset`` and ``train`` — all spcl calls — are the same C library either way. When
either package is already imported, nothing is hidden.
"""

from __future__ import annotations

import sys
from types import ModuleType

HIDDEN: tuple[str, ...] = ("sklearn", "pandas")
"""Optional dependencies of lightgbm that spcl's use of it does not need."""


def import_lightgbm() -> ModuleType:
    """The ``lightgbm`` module, imported (when not yet imported) without :data:`HIDDEN`."""
    if "lightgbm" in sys.modules:
        return sys.modules["lightgbm"]
    hidden = [name for name in HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` raises ImportError
    try:
        import lightgbm
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]
    return lightgbm
