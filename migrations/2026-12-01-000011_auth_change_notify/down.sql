DROP TRIGGER endpoints_auth_changed_truncate ON endpoints;
DROP TRIGGER endpoints_auth_changed_delete ON endpoints;
DROP TRIGGER endpoints_auth_changed_update ON endpoints;
DROP FUNCTION switchboard_auth_endpoint_changed();
