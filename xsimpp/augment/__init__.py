"""xsim++ hard negatives (Chen et al. 2023): causality, entity and number perturbations of English."""

from .core import (
    CATEGORIES,
    DEFAULT_MAX_PER_CATEGORY,
    DEFAULT_VALUES_PER_NUMBER,
    NER_BACKENDS,
    AugmentedSet,
    build_augmented,
    format_stats,
    output_paths,
    write_laser_format,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT_MAX_PER_CATEGORY",
    "DEFAULT_VALUES_PER_NUMBER",
    "NER_BACKENDS",
    "AugmentedSet",
    "build_augmented",
    "format_stats",
    "output_paths",
    "write_laser_format",
]
