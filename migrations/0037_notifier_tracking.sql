-- The notifier's sink is one of a log follower's (projections/notifying.py): like every sink
-- whose rows are shared by the projection generations (the vectors), it keeps its stored
-- offsets in `public.projector_offset`, projector `notifications`, written in the transaction
-- that owes the deliveries. What migration 0029's `webhook_offset` stored moves there, so a
-- notifier resumes after what it owed, and the table goes.

INSERT INTO public.projector_offset (projector, topic, partition, next_offset)
SELECT 'notifications', topic, partition, next_offset FROM public.webhook_offset
ON CONFLICT (projector, topic, partition)
    DO UPDATE SET next_offset = GREATEST(projector_offset.next_offset, EXCLUDED.next_offset);

DROP TABLE public.webhook_offset;
