"""Headless Chromium for browser tests: Debian's ``chromium`` + ``chromium-driver`` driven by
Selenium.

The driver is always ``/usr/bin/chromedriver`` through a ``Service`` (Selenium never downloads one).
Without a browser the tests skip with the reason — unless ``SPCL_REQUIRE_BROWSER`` is set (CI),
where they fail instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("SPCL_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("SPCL_CHROMEDRIVER", "/usr/bin/chromedriver"))
FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1200,900",
)


def require_browser() -> None:
    """Skip (or fail, when ``SPCL_REQUIRE_BROWSER`` is set) unless Chromium, chromedriver and
    Selenium exist."""
    missing = [
        str(p) for p in (CHROMIUM, CHROMEDRIVER) if not (p.is_file() and os.access(p, os.X_OK))
    ]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (pip install -e '.[dev]')")
    if not missing:
        return
    reason = (
        f"browser test needs {', '.join(missing)} (Debian: apt-get install chromium"
        " chromium-driver)"
    )
    if os.environ.get("SPCL_REQUIRE_BROWSER"):
        pytest.fail(f"SPCL_REQUIRE_BROWSER is set but {reason}")
    pytest.skip(reason)


@contextmanager
def chromium(profile: Path, downloads: Path | None = None, width: int = 1200) -> Iterator[Any]:
    """A headless Chromium session with a fresh ``--user-data-dir`` (``profile``), browser logs
    kept."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")
    profile.mkdir(parents=True, exist_ok=True)
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(
            flag.replace("1200", str(width)) if flag.startswith("--window-size") else flag
        )
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if downloads is not None:
        downloads.mkdir(parents=True, exist_ok=True)
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(downloads), "download.prompt_for_download": False},
        )
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        if downloads is not None:
            driver.execute_cdp_cmd(
                "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
            )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def severe_logs(driver: Any) -> list[dict[str, Any]]:
    """Browser console entries at level SEVERE (errors, CSP violations, failed loads)."""
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
