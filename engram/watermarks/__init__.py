"""The formation backlog and the watermarks read from it: the one owner of ``formation_backlog``.

The formation stage records each episode it reads (``pending``) and its failed attempts and
parking; the belief projector marks an episode ``formed`` in the transaction that commits its
beliefs, or parks one it cannot project; readers ask how far a project has formed and wait on
it. Three stages write and read this table, so none of them owns it: :mod:`watermarks.backlog`
holds every statement on it, :mod:`watermarks.waiting` the waits that readers and the CLI use."""
