CREATE OR REPLACE FUNCTION public.switchboard_outbox_pair_id(event_id bigint, sink_id uuid)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN (((((lpad(to_hex(event_id), 12, '0'::text) || '8'::text) || substr(replace((sink_id)::text, '-'::text, ''::text), 1, 3)) || '8'::text) || substr(replace((sink_id)::text, '-'::text, ''::text), 4, 15)))::uuid
