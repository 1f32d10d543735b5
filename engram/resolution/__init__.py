"""The resolution core, pure: claims batches and what is believed now in, row changes out.

Formation (:mod:`formation`) decides what an episode claims; this package decides what those
claims do to a principal's memory — new, duplicate, refinement, conflict, contradiction,
supersession, corrections and deletions — and which rows change (:func:`resolution.chunk.
resolve_chunk`), in the canonical order that makes the projection a function of the set of
claims (:mod:`resolution.ordering`), with the undo records that let a late batch rewind only
what follows it (:mod:`resolution.undo`). The belief projector (:mod:`projections`) loads the
state a chunk consults, calls this core and writes what it returns: no I/O, no clock and no
randomness here, like the formation core it builds on.
"""
