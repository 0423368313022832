"""Measured runs in, predictions out: ``validate`` (every run's predicted against measured iteration
time, MAPE, worst error, rank correlation per group) and ``calibrate`` (an accelerator's calibration
parameters fitted on measured runs)."""

from .calibrate import (
    CALIBRATION_FIELDS,
    Calibration,
    CalibrationField,
    as_fields,
    calibrate,
    calibration_fields,
    fields_named,
    fit_npu,
    read_calibrated,
)
from .metrics import mape, measured_rank_of_predicted_fastest, spearman, worst_error
from .predict import predict_ms, run_instance
from .run import GroupResult, Validation, ValidationRow, validate

__all__ = [
    "CALIBRATION_FIELDS",
    "Calibration",
    "CalibrationField",
    "as_fields",
    "calibrate",
    "calibration_fields",
    "fields_named",
    "fit_npu",
    "read_calibrated",
    "mape",
    "measured_rank_of_predicted_fastest",
    "spearman",
    "worst_error",
    "predict_ms",
    "run_instance",
    "GroupResult",
    "Validation",
    "ValidationRow",
    "validate",
]
