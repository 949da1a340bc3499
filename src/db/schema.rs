// Diesel table definitions, kept in step with `migrations/` by hand (and checked by the
// integration tests, which run every query against the migrated schema).

diesel::table! {
    humans (id) {
        id -> Uuid,
        email -> Text,
        display_name -> Text,
        password_hash -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    board_sessions (id) {
        id -> Uuid,
        human_id -> Uuid,
        token_hash -> Bytea,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    teams (id) {
        id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    owner_scopes (id) {
        id -> Uuid,
        human_id -> Nullable<Uuid>,
        team_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    team_members (team_id, human_id) {
        team_id -> Uuid,
        human_id -> Uuid,
        role -> Text,
        added_at -> Timestamptz,
    }
}

diesel::table! {
    operator_tokens (id) {
        id -> Uuid,
        human_id -> Uuid,
        token_hash -> Bytea,
        token_prefix -> Text,
        label -> Text,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    endpoints (id) {
        id -> Uuid,
        scope_id -> Uuid,
        slug -> Text,
        token_hash -> Bytea,
        token_prefix -> Text,
        grants -> Array<Text>,
        state -> Text,
        revoked_at -> Nullable<Timestamptz>,
        expires_at -> Nullable<Timestamptz>,
        default_lease_seconds -> Nullable<Int4>,
        presence -> Text,
        presence_changed_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    events (id) {
        id -> Uuid,
        scope_id -> Uuid,
        endpoint_id -> Nullable<Uuid>,
        source -> Text,
        event_type -> Nullable<Text>,
        external_id -> Nullable<Text>,
        trust_mode -> Text,
        verified -> Bool,
        headers -> Jsonb,
        payload -> Nullable<Bytea>,
        payload_size -> Int4,
        disposition -> Text,
        received_at -> Timestamptz,
        webhook_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Uuid,
        scope_id -> Uuid,
        endpoint_id -> Uuid,
        source_type -> Text,
        queue -> Text,
        max_attempts -> Int4,
        ingest_token_hash -> Bytea,
        ingest_token_prefix -> Text,
        signing_secret -> Nullable<Text>,
        secret_fingerprint -> Nullable<Text>,
        unverified -> Bool,
        trusted_actors -> Nullable<Jsonb>,
        rules -> Jsonb,
        refused_deliveries -> Int8,
        created_at -> Timestamptz,
        secret_fingerprint_keyed -> Bool,
    }
}

diesel::table! {
    notify_hooks (id) {
        id -> Uuid,
        endpoint_id -> Uuid,
        url -> Text,
        queues -> Array<Text>,
        enabled -> Bool,
        disabled_reason -> Nullable<Text>,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_valid_until -> Nullable<Timestamptz>,
        consecutive_failures -> Int4,
        last_status -> Nullable<Int4>,
        last_error -> Nullable<Text>,
        last_attempt_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        created_by_agent -> Nullable<Bool>,
    }
}

diesel::table! {
    todos (id) {
        id -> Uuid,
        endpoint_id -> Uuid,
        scope_id -> Uuid,
        queue -> Text,
        source -> Nullable<Text>,
        kind -> Nullable<Text>,
        title -> Text,
        payload -> Nullable<Jsonb>,
        payload_size -> Int4,
        event_id -> Nullable<Uuid>,
        idempotency_key -> Nullable<Text>,
        state -> Text,
        attempt -> Int4,
        max_attempts -> Int4,
        attempts_total -> Int4,
        claimed_by -> Nullable<Uuid>,
        lease_expires_at -> Nullable<Timestamptz>,
        lease_token_hash -> Nullable<Bytea>,
        interrupt_reason -> Nullable<Text>,
        interrupt_expires_at -> Nullable<Timestamptz>,
        interrupt_wait_seconds -> Nullable<Int4>,
        next_retry_at -> Nullable<Timestamptz>,
        result -> Nullable<Jsonb>,
        dead_reason -> Nullable<Text>,
        dead_lettered_at -> Nullable<Timestamptz>,
        dead_letter_count -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        claimed_at -> Nullable<Timestamptz>,
        completed_at -> Nullable<Timestamptz>,
        quarantine_reason -> Nullable<Text>,
        work_order -> Nullable<Text>,
        attempt_claimant -> Nullable<Text>,
        attempt_relay -> Bool,
        attempt_heartbeat_at -> Nullable<Timestamptz>,
        attempt_ended_at -> Nullable<Timestamptz>,
        attempt_lease_expires_at -> Nullable<Timestamptz>,
        attempt_summary -> Nullable<Text>,
        attempt_summary_truncated -> Bool,
        attempt_artifact -> Nullable<Text>,
        attempt_on_row -> Nullable<Int4>,
    }
}

diesel::table! {
    todo_attempts (todo_id, seq) {
        todo_id -> Uuid,
        seq -> Int4,
        claimer_endpoint_id -> Nullable<Uuid>,
        claimant -> Nullable<Text>,
        relay -> Bool,
        claimed_at -> Timestamptz,
        last_heartbeat_at -> Nullable<Timestamptz>,
        lease_expires_at -> Timestamptz,
        ended_at -> Nullable<Timestamptz>,
        outcome -> Nullable<Text>,
        disposition -> Nullable<Text>,
        summary -> Nullable<Text>,
        summary_truncated -> Bool,
        artifact -> Nullable<Text>,
    }
}

diesel::table! {
    queue_admission (endpoint_id, queue) {
        endpoint_id -> Uuid,
        queue -> Text,
        paused -> Bool,
        max_in_flight -> Nullable<Int4>,
        per_hour -> Nullable<Int4>,
        window_hour -> Timestamptz,
        window_claims -> Int4,
        updated_at -> Timestamptz,
        updated_by -> Nullable<Uuid>,
    }
}

diesel::table! {
    queue_deferrals (endpoint_id, queue, hour, reason) {
        endpoint_id -> Uuid,
        queue -> Text,
        hour -> Timestamptz,
        reason -> Text,
        count -> Int8,
    }
}

diesel::joinable!(endpoints -> owner_scopes (scope_id));
diesel::joinable!(webhooks -> endpoints (endpoint_id));
diesel::joinable!(notify_hooks -> endpoints (endpoint_id));
diesel::joinable!(todos -> endpoints (endpoint_id));
diesel::joinable!(todo_attempts -> todos (todo_id));
diesel::joinable!(team_members -> teams (team_id));
diesel::joinable!(team_members -> humans (human_id));
diesel::joinable!(operator_tokens -> humans (human_id));
diesel::joinable!(queue_admission -> endpoints (endpoint_id));
diesel::joinable!(queue_deferrals -> endpoints (endpoint_id));

diesel::allow_tables_to_appear_in_same_query!(
    humans,
    teams,
    owner_scopes,
    team_members,
    operator_tokens,
    endpoints,
    notify_hooks,
    events,
    todos,
    todo_attempts,
    queue_admission,
    queue_deferrals
);
