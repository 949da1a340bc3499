//! A tool call to the answer function of its verb ([`crate::agent_api`]), which its REST
//! route returns too: the same service call, the same rules, the same answer body.

use serde::Serialize;
use serde_json::Value;

use super::args::Args;
use super::gate::ToolCaller;
use super::local::Local;
use super::tools::ToolName;
use crate::agent_api::lean_answers::AnswerForm;
use crate::agent_api::{batches, hooks, owner_page, presence, sinks, todos};
use crate::domain::ids::{HookId, TodoId};
use crate::domain::todo_state::Presence;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::sinks::service::agent as agent_sinks;
use crate::store::endpoints::AgentPrincipal;

/// What a tool answers.
pub enum ToolAnswer {
    /// The route's answer body.
    Body(Value),
    /// The route answers no body (204): what happened, in words.
    Done(&'static str),
}

fn body(answer: impl Serialize) -> Result<ToolAnswer> {
    serde_json::to_value(answer).map(ToolAnswer::Body).map_err(|e| Error::internal_from("rendering a tool's answer", e))
}

/// Calls `tool` for `caller` with `args` (thread-bound work on `local`).
pub async fn call(tool: ToolName, local: &Local, caller: ToolCaller, args: Args) -> Result<ToolAnswer> {
    use ToolName as T;
    let (s, me): (&Services, &AgentPrincipal) = (&caller.services, &caller.me);
    let path = tool.path();
    match tool {
        T::ListTodos => body(todos::list_answer(s, me, args.body()?).await?),
        T::GetTodo => body(todos::get_answer(s, me, args.only::<TodoId>(path)?).await?),
        T::ClaimNext => body(todos::claim_next_answer(s, me, args.body()?).await?),
        T::Claim => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::claim_answer(s, me, id, b).await?)
        }
        T::Heartbeat => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::heartbeat_answer(s, me, id, b).await?)
        }
        T::Complete => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::complete_answer(s, me, id, b).await?)
        }
        T::Fail => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::fail_answer(s, me, id, b).await?)
        }
        T::Release => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::release_answer(s, me, id, b).await?)
        }
        T::Interrupt => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::interrupt_answer(s, me, id, b).await?)
        }
        T::Resume => {
            let (id, b) = args.with::<TodoId, _>(path)?;
            body(todos::resume_answer(s, me, id, b).await?)
        }
        T::CreateTodo => body(todos::create_answer(s, me, args.body()?).await?),
        T::CompleteMany => body(batches::complete_answer(s, me, args.body()?, AnswerForm::Full).await?),
        T::FailMany => body(batches::fail_answer(s, me, args.body()?, AnswerForm::Full).await?),
        T::CreateTodos => body(batches::create_answer(s, me, args.body()?).await?),
        T::ClockIn | T::ClockOut => {
            args.none()?;
            let p = if tool == T::ClockIn { Presence::In } else { Presence::Out };
            body(presence::clock_answer(s, me, p).await?)
        }
        T::ListHooks => {
            args.none()?;
            body(hooks::list_answer(s, me).await?)
        }
        T::CreateHook => body(hooks::create_answer(s, me, args.body()?).await?),
        T::RotateHook => body(hooks::rotate_answer(s, me, args.only::<HookId>(path)?).await?),
        T::DeleteHook => body(hooks::delete_answer(s, me, args.only::<HookId>(path)?).await?),
        T::PageOwner => body(owner_page::page_answer(s, me, args.body()?).await?),
        T::ListSinks => {
            args.none()?;
            body(sinks::list_answer(s, me).await?)
        }
        T::SetSink => {
            let (name, b) = args.with::<String, _>(path)?;
            body(sinks::put_answer(s, me, &name, b).await?.0)
        }
        T::DeleteSink => {
            let name = args.only::<String>(path)?;
            agent_sinks::delete(s, me, &name).await?;
            Ok(ToolAnswer::Done("deleted"))
        }
        T::TestSink => {
            let name = args.only::<String>(path)?;
            let ToolCaller { services, me } = caller.clone();
            body(local.run(move || async move { sinks::test_answer(&services, &me, &name).await }).await?)
        }
        T::SetSinkSubscriptions => {
            let (name, b) = args.with::<String, _>(path)?;
            body(sinks::subscriptions_answer(s, me, &name, b).await?)
        }
    }
}
