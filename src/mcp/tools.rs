//! The tool table: every agent verb of SPEC 5 under its SPEC 13 name, the service action
//! it performs (so `tools/list` shows exactly what the endpoint may call, by the same
//! permission check the services make), its route's path parameter and body type (its
//! input schema is generated from that type). What the model is told is
//! [`super::descriptions`]; the two meet in [`super::table`].
//!
//! The batch verbs are tools too, named for what they do many of: `complete_many`,
//! `fail_many` (grants `complete` and `fail`) and `create_todos` (grant `create_todo`);
//! claiming many is `claim_next` with `limit`, as on REST. The `notifications` verbs
//! keep the original implementation's names: `list_sinks`, `set_sink`, `delete_sink`,
//! `test_sink`, `set_sink_subscriptions`.

use serde_json::{Map, Value};

use super::args::{PathParam, bare_schema, input_schema};
use crate::agent_api::batch_dto::{BatchCreateBody, BatchFinishBody};
use crate::agent_api::hook_dto::CreateHookBody;
use crate::agent_api::owner_page::OwnerPageBody;
use crate::agent_api::sink_dto::Subscriptions;
use crate::agent_api::sinks::PutSinkBody;
use crate::agent_api::todo_bodies::{ClaimBody, CreateTodoBody, FinishBody, HeartbeatBody, InterruptBody, ResumeBody};
use crate::agent_api::todos::ListTodosQuery;
use crate::service::Principal;
use crate::service::permissions::{Action, check};
use crate::store::endpoints::AgentPrincipal;

macro_rules! tools {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// One tool.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolName {
            $(#[doc = concat!("`", $name, "`")] $variant),+
        }

        impl ToolName {
            /// Every tool, in the order `tools/list` gives them.
            pub const ALL: &'static [ToolName] = &[$(ToolName::$variant),+];

            /// Its name on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $(ToolName::$variant => $name),+ }
            }

            /// The tool of that name.
            pub fn parse(name: &str) -> Option<ToolName> {
                match name { $($name => Some(ToolName::$variant),)+ _ => None }
            }
        }
    };
}

tools! {
    ClaimNext => "claim_next",
    Heartbeat => "heartbeat",
    Complete => "complete",
    Fail => "fail",
    Release => "release",
    Claim => "claim",
    GetTodo => "get_todo",
    ListTodos => "list_todos",
    CompleteMany => "complete_many",
    FailMany => "fail_many",
    Interrupt => "interrupt",
    Resume => "resume",
    CreateTodo => "create_todo",
    CreateTodos => "create_todos",
    ClockIn => "clock_in",
    ClockOut => "clock_out",
    ListHooks => "list_hooks",
    CreateHook => "create_hook",
    RotateHook => "rotate_hook",
    DeleteHook => "delete_hook",
    PageOwner => "notify_owner",
    ListSinks => "list_sinks",
    SetSink => "set_sink",
    DeleteSink => "delete_sink",
    TestSink => "test_sink",
    SetSinkSubscriptions => "set_sink_subscriptions",
}

impl ToolName {
    /// The service action it performs: the one its REST route names.
    pub fn action(self) -> Action {
        use ToolName as T;
        match self {
            T::ListTodos => Action::AgentListTodos,
            T::GetTodo => Action::AgentGetTodo,
            T::Claim => Action::Claim,
            T::ClaimNext => Action::ClaimNext,
            T::Heartbeat => Action::Heartbeat,
            T::Complete => Action::Complete,
            T::Fail => Action::Fail,
            T::Release => Action::Release,
            T::CompleteMany => Action::CompleteMany,
            T::FailMany => Action::FailMany,
            T::Interrupt => Action::Interrupt,
            T::Resume => Action::Resume,
            T::CreateTodo => Action::AgentCreateTodo,
            T::CreateTodos => Action::AgentCreateTodos,
            T::ClockIn => Action::ClockIn,
            T::ClockOut => Action::ClockOut,
            T::ListHooks => Action::AgentListHooks,
            T::CreateHook => Action::AgentCreateHook,
            T::RotateHook => Action::AgentRotateHook,
            T::DeleteHook => Action::AgentDeleteHook,
            T::PageOwner => Action::PageOwner,
            T::ListSinks => Action::AgentListSinks,
            T::SetSink => Action::AgentPutSink,
            T::DeleteSink => Action::AgentDeleteSink,
            T::TestSink => Action::AgentTestSink,
            T::SetSinkSubscriptions => Action::AgentSetSubscriptions,
        }
    }

    /// The path parameter of its route.
    pub fn path(self) -> PathParam {
        use ToolName as T;
        match self {
            T::GetTodo | T::Claim | T::Heartbeat | T::Complete | T::Fail | T::Release | T::Interrupt | T::Resume => {
                PathParam::TodoId
            }
            T::RotateHook | T::DeleteHook => PathParam::HookId,
            T::SetSink | T::DeleteSink | T::TestSink | T::SetSinkSubscriptions => PathParam::SinkName,
            T::ListTodos
            | T::ClaimNext
            | T::CompleteMany
            | T::FailMany
            | T::CreateTodo
            | T::CreateTodos
            | T::ClockIn
            | T::ClockOut
            | T::ListHooks
            | T::CreateHook
            | T::PageOwner
            | T::ListSinks => PathParam::None,
        }
    }

    /// Its input schema: its route's body type's, with the path parameter.
    pub fn input_schema(self) -> Map<String, Value> {
        use ToolName as T;
        let path = self.path();
        match self {
            T::ListTodos => input_schema::<ListTodosQuery>(path),
            T::Claim | T::ClaimNext => input_schema::<ClaimBody>(path),
            T::Heartbeat => input_schema::<HeartbeatBody>(path),
            T::Complete | T::Fail | T::Release => input_schema::<FinishBody>(path),
            T::CompleteMany | T::FailMany => input_schema::<BatchFinishBody>(path),
            T::Interrupt => input_schema::<InterruptBody>(path),
            T::Resume => input_schema::<ResumeBody>(path),
            T::CreateTodo => input_schema::<CreateTodoBody>(path),
            T::CreateTodos => input_schema::<BatchCreateBody>(path),
            T::CreateHook => input_schema::<CreateHookBody>(path),
            T::PageOwner => input_schema::<OwnerPageBody>(path),
            T::SetSink => input_schema::<PutSinkBody>(path),
            T::SetSinkSubscriptions => input_schema::<Subscriptions>(path),
            T::GetTodo
            | T::ClockIn
            | T::ClockOut
            | T::ListHooks
            | T::RotateHook
            | T::DeleteHook
            | T::ListSinks
            | T::DeleteSink
            | T::TestSink => bare_schema(path),
        }
    }

    /// Whether it only reads.
    pub fn read_only(self) -> bool {
        matches!(self, ToolName::ListTodos | ToolName::GetTodo | ToolName::ListHooks | ToolName::ListSinks)
    }

    /// Whether it deletes something.
    pub fn deletes(self) -> bool {
        matches!(self, ToolName::DeleteHook | ToolName::DeleteSink)
    }

    /// Whether `me` may call it now (the services' own permission check).
    pub fn granted(self, me: &AgentPrincipal) -> bool {
        check(self.action(), Principal::Endpoint(me), None).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::grants::Verb;

    #[test]
    fn every_agent_verb_has_its_tool_under_its_own_name() {
        for verb in Verb::ALL {
            let named = match verb {
                // Grants of a family: each of their tools is named for its verb.
                Verb::ManageHooks | Verb::Notifications => continue,
                other => other.as_str(),
            };
            assert!(ToolName::parse(named).is_some(), "no tool for {verb}");
        }
        for t in ToolName::ALL {
            assert_eq!(ToolName::parse(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn every_input_schema_is_an_object_schema() {
        for t in ToolName::ALL {
            let schema = t.input_schema();
            assert_eq!(schema.get("type"), Some(&Value::from("object")), "{}", t.as_str());
            if let Some(key) = t.path().key() {
                assert_eq!(schema["required"][0], key, "{}", t.as_str());
            }
        }
    }
}
