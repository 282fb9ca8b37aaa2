"""Run reports people look at: ``spcl report OUT/`` → ``OUT/report.html`` (self-contained) + PNG
charts.

``facts`` gathers counts from a filter or mask output, ``charts`` draws them, ``page`` renders the
HTML, ``build`` writes the files. Nothing from a document (text, id, value) ever reaches a report.
"""

from spcl.report.build import write_report

__all__ = ["write_report"]
