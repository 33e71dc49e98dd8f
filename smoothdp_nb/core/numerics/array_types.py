"""The array and seed types named in the package's annotations (one name per concept)."""

from __future__ import annotations

import numbers
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray", "FloatOrArray", "IntArray", "BoolArray", "RealNumber", "SeedLike"]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
#: a float for scalar inputs, else an array (the public functions' "float or ndarray")
FloatOrArray: TypeAlias = float | FloatArray

# what the validators accept as "a real number": Python and numpy scalars (bools are refused at run time)
RealNumber: TypeAlias = numbers.Real | np.floating[Any] | np.integer[Any]

# what :func:`.validation.as_rng` accepts (a legacy RandomState only from scipy's internals)
SeedLike: TypeAlias = int | np.integer[Any] | np.random.SeedSequence | np.random.Generator | None
