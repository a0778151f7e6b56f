"""Plain data: fact rows, findings, reports. Imports nothing else of gpuvet."""
from .errors import GpuvetError, InputError, UsageError
from .facts import SUPPLIED_BY, SUPPLIED_BY_VENDOR, TABLES, Column, Facts, ProbeError, Row, TableSpec, row
from .findings import (Applicability, Deduction, Evidence, ExitCode, Finding, Fix, Outcome, Report,
                       ReportExtra, ReportHeader, Severity)

__all__ = ["SUPPLIED_BY", "SUPPLIED_BY_VENDOR", "TABLES", "Column", "Facts", "ProbeError", "Row", "TableSpec", "row", "Applicability",
           "Deduction", "Evidence", "ExitCode", "Finding", "Fix", "Outcome", "Report", "ReportExtra", "ReportHeader", "Severity",
           "GpuvetError", "InputError", "UsageError"]
