"""LLM extraction: the prompt (``spcl.extract.prompt``) and the ``TYPE<TAB>ORIGINAL`` contract
parser.

Only light modules are imported here; backends (vLLM, OpenAI-compatible servers) are imported by
name.
"""

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.contract import ParseResult, check_candidates, parse_extraction

__all__ = ["DEFAULT_TYPES", "ParseResult", "check_candidates", "parse_extraction"]
