"""A base for objects that hold a resource: ``with x:`` closes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Self


class Closing:
    """``__enter__`` returns the object, ``__exit__`` calls :meth:`close`."""

    def close(self) -> None:
        """Release the resource (subclasses say which)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
