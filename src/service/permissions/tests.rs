use super::*;
use crate::domain::ids::{EndpointId, HumanId};
use crate::domain::todo_state::TeamRole;
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::{Reach, ScopeGrant};

struct World {
    personal: ScopeId,
    team: ScopeId,
    elsewhere: ScopeId,
}

fn world() -> World {
    World { personal: ScopeId::new(), team: ScopeId::new(), elsewhere: ScopeId::new() }
}

fn human(w: &World, team_role: TeamRole) -> Reach {
    Reach {
        human: HumanId::new(),
        personal: w.personal,
        scopes: vec![
            ScopeGrant { scope: w.personal, role: TeamRole::Admin },
            ScopeGrant { scope: w.team, role: team_role },
        ],
    }
}

fn endpoint(scope: ScopeId, grants: &[Verb]) -> AgentPrincipal {
    AgentPrincipal {
        endpoint_id: EndpointId::new(),
        scope_id: scope,
        slug: "agent".into(),
        grants: grants.to_vec(),
        default_lease_seconds: None,
        expires_at: None,
    }
}

fn status(r: Result<()>) -> u16 {
    match r {
        Ok(()) => 200,
        Err(Error::NotFound) => 404,
        Err(Error::Forbidden(_)) => 403,
        Err(other) => panic!("unexpected refusal {other:?}"),
    }
}

#[test]
fn an_admin_rule_lets_the_admin_refuses_a_member_and_hides_from_others() {
    let w = world();
    let admin = human(&w, TeamRole::Admin);
    let member = human(&w, TeamRole::Member);
    let team = Some(Place::scope(w.team));
    assert_eq!(status(check(Action::RevokeEndpoint, Principal::Human(&admin), team)), 200);
    assert_eq!(status(check(Action::RevokeEndpoint, Principal::Human(&member), team)), 403);
    assert_eq!(status(check(Action::RevokeEndpoint, Principal::Human(&member), Some(Place::scope(w.personal)))), 200);
    assert_eq!(status(check(Action::RevokeEndpoint, Principal::Human(&admin), Some(Place::scope(w.elsewhere)))), 404);
}

#[test]
fn a_member_rule_lets_any_member_and_hides_from_others() {
    let w = world();
    let member = human(&w, TeamRole::Member);
    assert_eq!(status(check(Action::ShowTodo, Principal::Human(&member), Some(Place::scope(w.team)))), 200);
    assert_eq!(status(check(Action::RetryNow, Principal::Human(&member), Some(Place::scope(w.team)))), 200);
    assert_eq!(status(check(Action::ShowTodo, Principal::Human(&member), Some(Place::scope(w.elsewhere)))), 404);
}

#[test]
fn a_grant_rule_needs_the_verb_and_the_endpoints_own_resource() {
    let w = world();
    let with = endpoint(w.team, &[Verb::ManageHooks]);
    let without = endpoint(w.team, &[Verb::Claim]);
    let own = Some(Place::endpoint(w.team, with.endpoint_id));
    assert_eq!(status(check(Action::AgentRotateHook, Principal::Endpoint(&with), own)), 200);
    assert_eq!(status(check(Action::AgentRotateHook, Principal::Endpoint(&without), None)), 403);
    let sibling = Some(Place::endpoint(w.team, EndpointId::new()));
    assert_eq!(status(check(Action::AgentRotateHook, Principal::Endpoint(&with), sibling)), 404);
    assert_eq!(
        status(check(Action::AgentRotateHook, Principal::Endpoint(&with), Some(Place::scope(w.elsewhere)))),
        404
    );
}

#[test]
fn the_wrong_kind_of_caller_is_refused_and_open_actions_take_anyone() {
    let w = world();
    let admin = human(&w, TeamRole::Admin);
    let agent = endpoint(w.team, crate::domain::grants::DRAIN_FAMILY);
    assert_eq!(status(check(Action::Claim, Principal::Human(&admin), None)), 403);
    assert_eq!(status(check(Action::ListEndpoints, Principal::Endpoint(&agent), None)), 403);
    assert_eq!(status(check(Action::RevokeEndpoint, Principal::Endpoint(&agent), Some(Place::scope(w.team)))), 403);
    assert_eq!(status(check(Action::Ingest, Principal::Endpoint(&agent), None)), 200);
    assert_eq!(status(check(Action::ClockIn, Principal::Endpoint(&endpoint(w.team, &[])), None)), 200);
}

#[test]
fn sensitive_verbs_are_asked_for_by_name_and_never_by_the_drain_family() {
    let drain = endpoint(ScopeId::new(), crate::domain::grants::DRAIN_FAMILY);
    for action in [Action::AgentCreateHook, Action::AgentListHooks, Action::AgentRotateHook, Action::AgentDeleteHook] {
        assert_eq!(action.rule(), Rule::Grant(Verb::ManageHooks));
        assert_eq!(status(check(action, Principal::Endpoint(&drain), None)), 403, "{action:?}");
    }
}
