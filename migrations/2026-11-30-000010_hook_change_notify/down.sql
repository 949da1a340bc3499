DROP TRIGGER endpoints_hook_match_changed_delete ON endpoints;
DROP TRIGGER endpoints_hook_match_changed_update ON endpoints;
DROP TRIGGER notify_hooks_changed_update ON notify_hooks;
DROP TRIGGER notify_hooks_changed_insert_delete ON notify_hooks;
DROP FUNCTION switchboard_hook_endpoint_changed();
DROP FUNCTION switchboard_hook_changed();
