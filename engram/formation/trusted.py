"""Contract models built from values that are already valid, without validating them again.

Resolution makes a memory event for every belief a batch changes, from a validated claims
batch and name-based ids: nothing is left to check. Validating costs more than the rest of the
event, and so does pydantic's ``model_construct``, which looks up every field's default and
alias; :func:`unvalidated` sets just what ``model_construct`` sets when every field is given.
A unit test holds the two equal, so a pydantic release that changes a model's internals fails
there, not in production.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

Model = TypeVar("Model", bound=BaseModel)


def unvalidated(model: type[Model], values: dict[str, Any]) -> Model:
    """``model.model_construct(**values)``, for ``values`` that name every field of ``model``
    in the order the model declares them (serialisation follows that order), each already
    valid for its field. ``values`` becomes the model's own dict."""
    made = model.__new__(model)
    object.__setattr__(made, "__dict__", values)
    object.__setattr__(made, "__pydantic_fields_set__", set(values))
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made
