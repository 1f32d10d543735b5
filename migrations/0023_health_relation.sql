-- Issue 27: the vocabulary's first special-category relation. ``has_condition`` holds a health
-- condition, injury, allergy or diet the subject states of themselves. Its portability ceiling
-- is 'local' (never read outside the project it formed in); formation/vocabulary.py gives it
-- the sensitivity class 'health' and leaves it out of a policy's default enabled relations, so
-- it forms only under a policy that names it. Adding a relation changes the vocabulary digest,
-- hence the policy version: what forms under it is a new generation, by re-derivation.
INSERT INTO relation (position, name, semantic_type, object_kind, cardinality, is_event,
                      belief_type, portability_ceiling, description) VALUES
    (40, 'has_condition', 'health', 'value', 'many', false, 'fact', 'local', 'health condition, injury, allergy or diet the subject states of themselves');
