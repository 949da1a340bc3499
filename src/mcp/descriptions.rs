//! What each tool tells the model that calls it: what it does, when to call it, and what
//! its answer looks like (an empty queue included). The arguments are described by the
//! input schema (the REST body's field documentation); these texts say how to use them
//! together. Answers are the REST answer bodies.

use super::tools::ToolName;

/// The server's instructions, sent with `initialize` (the loop an agent runs).
pub const INSTRUCTIONS: &str = "Switchboard holds this endpoint's work queue: todos made from webhooks (or by agents). \
To work: call claim_next (with wait_seconds up to 30 to wait for work), do what the claimed todo's title, payload and \
work_order ask, then call complete with its id and lease_token (or fail, which retries it later with backoff until its \
attempt cap, then makes it a dead letter its owner is told of). Call heartbeat before the lease runs out on long work, \
release to hand a todo back untouched, interrupt to wait on a human. A refused call is a tool error whose text starts \
with the error code (conflict, not_found, invalid_argument, forbidden, rate_limited, unavailable).";

/// The description `tools/list` gives `tool`.
pub fn describe(tool: ToolName) -> &'static str {
    use ToolName as T;
    match tool {
        T::ClaimNext => {
            "Claim the oldest pending todo of this endpoint (of one queue with `queue`) under a lease, to work on it. \
             Call this to get work. The answer has `todo` (id, title, payload, work_order, attempt), `lease_token` \
             (pass it to heartbeat, complete, fail, release) and `prior_attempts` (what earlier attempts said). An empty \
             queue is not an error: the answer is {\"empty\": true} (with `deferred` when an admission budget held work \
             back); wait and ask again, or pass `wait_seconds` (1–30) to be answered as soon as work arrives. With \
             `limit` above 1 it claims up to that many and answers {\"claims\": [...], \"empty\": ...}. Label yourself \
             with `claimant`. `lease_ttl_seconds` (1–86400) sets how long you may work before the lease lapses (default: \
             the endpoint's, else 300 s); a lapsed lease puts the todo back in the queue."
        }
        T::Heartbeat => {
            "Extend the lease of a todo you claimed (from now, by `lease_ttl_seconds` or the default), so it is not \
             taken back while you still work on it; on an interrupted todo it renews the interrupt lease. Call it well \
             before `lease_expires_at`. Pass the claim's `lease_token`: a conflict means the lease was lost (another \
             claim holds the todo), so stop working on it. Answers the todo."
        }
        T::Complete => {
            "Mark a todo you claimed as done: its work is finished. Pass its `id` and the claim's `lease_token`, with \
             an optional `result` (any JSON kept on the todo), `summary` (a note for the attempt history, ≤2048 bytes) \
             and `artifact` (an https URL or mcp://cairn/<id> where the output is). Answers the todo (state `done`). \
             A conflict means you no longer hold it (its lease lapsed or the token is stale)."
        }
        T::Fail => {
            "Report that the work of a todo you claimed failed. Below its attempt cap it is retried later with backoff \
             (answer: state `failed` with `next_retry_at`); at the cap it becomes a dead letter (`dead_letter: true`) \
             and its owner is told. Pass its `id`, the claim's `lease_token`, and a `summary` saying what went wrong \
             (the next attempt and the owner read it), optionally `result` and `artifact`. Use release instead if you \
             did not try."
        }
        T::Release => {
            "Hand a todo you claimed back to the queue untouched (it does not count as an attempt), for example when \
             you cannot take it on now. Pass its `id` and the claim's `lease_token`. Answers the todo (state `pending`)."
        }
        T::Claim => {
            "Claim one particular pending todo by `id` (from list_todos) under a lease; otherwise as claim_next (same \
             answer, {\"empty\": true, \"deferred\": ...} when its queue's admission budget holds it back). `queue`, \
             `limit` and `wait_seconds` are claim_next's only."
        }
        T::GetTodo => {
            "Read one of this endpoint's todos by `id`: its fields, payload, result and latest attempts (who claimed, \
             how each ended, their summaries). Use it to look at a todo before or after working on it."
        }
        T::ListTodos => {
            "List this endpoint's drainable todos (pending, claimed, interrupted, failed with a retry scheduled), \
             newest first, without payloads: filter by `queue` and `state`, at most `limit` (1–200, default 50). An \
             empty queue answers {\"todos\": []}. To take work, use claim_next rather than list then claim."
        }
        T::CompleteMany => {
            "Complete many claimed todos in one call: `items` (1–100) of {id, lease_token, result?, summary?, \
             artifact?}, each exactly as complete would. Answers {\"results\": [...]} in order, each {id, ok: true, \
             todo} or {id, ok: false, error: {code, message}}; one bad item does not stop the others."
        }
        T::FailMany => {
            "Fail many claimed todos in one call: `items` (1–100) of {id, lease_token, summary?, result?, \
             artifact?}, each exactly as fail would (a retry below the cap, a dead letter at it). Answers \
             {\"results\": [...]} in order, each ok or with the error that item got."
        }
        T::Interrupt => {
            "Pause a todo you claimed to wait on a human or an outside event: `state` is `input_required` or \
             `auth_required`, `reason` says what you wait for, `wait_seconds` (1–604800, default 3600) how long. The \
             todo stays yours; heartbeat renews the wait, resume takes it up again. Answers the todo."
        }
        T::Resume => {
            "Take up an interrupted todo again under a fresh lease (the same attempt goes on). Pass its `id` and the \
             claim's `lease_token`. A conflict with `deferred` in the error means its queue's admission budget does \
             not admit it now: it stays interrupted, resume later. Answers the todo (state `claimed`)."
        }
        T::CreateTodo => {
            "Create a todo on one of this endpoint's queues, for yourself or another agent of this endpoint: `queue`, \
             `title`, optional `kind`, `payload` (any JSON), `max_attempts` (1–100) and `idempotency_key` (creating \
             again with a live todo's key answers that todo with `created: false`). Answers the todo and `created`."
        }
        T::CreateTodos => {
            "Create many todos in one call: `items` (1–500) of create_todo arguments, created in order in one \
             transaction. Answers {\"results\": [...]} in order, each {ok, created, todo} or {ok: false, error}."
        }
        T::ClockIn => {
            "Say that you are working this endpoint's queues now (its owner sees it; the queue digest reports \
             endpoints clocked out). Call when you start a working session. Answers {endpoint, presence, changed_at}."
        }
        T::ClockOut => {
            "Say that you have stopped working this endpoint's queues. Call when you stop. Answers {endpoint, \
             presence, changed_at}."
        }
        T::ListHooks => {
            "List this endpoint's notify hooks (URLs told `todo.ready` and `todo.dead_lettered`), with their health \
             and the ceiling; never a secret."
        }
        T::CreateHook => {
            "Add a notify hook to this endpoint: `url` (https) is POSTed a signed Standard Webhooks event when work is \
             ready or dies on its `queues` (absent: all). Answers the hook with its `signing_secret`, shown only here: \
             keep it to verify the signatures."
        }
        T::RotateHook => {
            "Replace the signing secret of a notify hook this endpoint's agent created (`id`; a hook its owner added is \
             not found); the old one still signs for 24 hours. Answers the new `signing_secret`, shown only here."
        }
        T::DeleteHook => "Delete a notify hook this endpoint's agent created (`id`). Answers {hook_id, deleted: true}.",
        T::PageOwner => {
            "Page this endpoint's owner (a person) through their notification sinks: `title` says what they need to \
             know, `severity` low/normal/high, `todo_id` links a todo. At most 5 an hour: use it when a human must act. \
             Answers {enqueued: <messages queued>} (0: no sink of the owner subscribes)."
        }
        T::ListSinks => "List the owner's notification sinks (Gotify, Apprise) by name; never a secret.",
        T::SetSink => {
            "Create or replace the owner's notification sink `name` with `connection_id` (an existing connection of \
             the owner; its secret is never read back): the sink posts to that connection's destination, which only \
             the owner sets. Optional: `kind` (the connection's), `apprise_mode`, `enabled`. Answers the sink."
        }
        T::DeleteSink => "Delete the owner's notification sink `name` and its subscriptions. Answers `deleted`.",
        T::TestSink => {
            "Send the owner's sink `name` one harmless test message (at most 6 a minute). Answers {ok} or {ok: false, \
             error: {code, message}}."
        }
        T::SetSinkSubscriptions => {
            "Replace which events the owner's sink `name` is sent: `subscriptions` of {events, queues?, endpoint_ids?, \
             webhook_ids?, min_severity?}; `include_excerpt: true` is refused (forbidden). Answers the subscriptions as \
             saved."
        }
    }
}
