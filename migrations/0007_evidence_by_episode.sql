-- The projector resolves a whole chunk of claims batches at once, and asks which beliefs the
-- chunk's episodes already cite (a same-source replay is a no-op): find evidence by episode.
CREATE INDEX evidence_episode ON evidence (episode_id);
