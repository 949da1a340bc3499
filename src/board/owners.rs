//! Owner scopes by name: the signed-in human's own scope reads as their email, a
//! team's as `team:<name>` (the owner reference the operator API and the CLI take), and
//! which of them the human administers (may vend endpoints and create webhooks in).

use super::session::Human;
use crate::domain::ids::ScopeId;
use crate::error::Result;
use crate::service::{Services, owners};

/// One of the human's owner scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The scope.
    pub scope: ScopeId,
    /// Its owner reference: the human's email, or `team:<name>`.
    pub reference: String,
    /// Whether this is the human's own scope.
    pub personal: bool,
    /// Whether the human may configure resources in it.
    pub admin: bool,
}

/// Every owner scope of the signed-in human, their own first, teams by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners(pub Vec<Owner>);

impl Owners {
    /// Loads the names of the human's team scopes.
    pub async fn of(s: &Services, human: &Human) -> Result<Owners> {
        let teams = owners::team_names(s, &human.reach).await?;
        let teams = teams.into_iter().map(|(scope, name)| (scope, format!("team:{name}"))).collect();
        Ok(Owners::from_parts(human, teams))
    }

    /// The human's own scope and their teams (`(scope, "team:<name>")`), with roles.
    pub fn from_parts(human: &Human, teams: Vec<(ScopeId, String)>) -> Owners {
        let personal = human.reach.personal;
        let mut out = vec![Owner { scope: personal, reference: human.email.clone(), personal: true, admin: true }];
        out.extend(teams.into_iter().filter(|(scope, _)| *scope != personal).map(|(scope, reference)| Owner {
            scope,
            admin: human.reach.is_admin_of(scope),
            reference,
            personal: false,
        }));
        Owners(out)
    }

    /// How `scope` reads: `you` for the human's own, `team:<name>` for a team.
    pub fn label(&self, scope: ScopeId) -> &str {
        match self.0.iter().find(|o| o.scope == scope) {
            Some(o) if o.personal => "you",
            Some(o) => &o.reference,
            None => "another owner",
        }
    }

    /// The scopes the human may configure, their own first.
    pub fn administered(&self) -> impl Iterator<Item = &Owner> {
        self.0.iter().filter(|o| o.admin)
    }

    /// Whether the human may configure `scope`.
    pub fn administers(&self, scope: ScopeId) -> bool {
        self.0.iter().any(|o| o.scope == scope && o.admin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::csrf::CsrfToken;
    use crate::domain::ids::HumanId;
    use crate::domain::todo_state::TeamRole;
    use crate::store::tenancy::{Reach, ScopeGrant};

    fn human(personal: ScopeId, teams: &[(ScopeId, TeamRole)]) -> Human {
        let mut scopes = vec![ScopeGrant { scope: personal, role: TeamRole::Admin }];
        scopes.extend(teams.iter().map(|&(scope, role)| ScopeGrant { scope, role }));
        Human {
            reach: Reach { human: HumanId::new(), personal, scopes },
            email: "ada@example.com".into(),
            name: "Ada".into(),
            csrf: CsrfToken::random(),
            notice: None,
            session_token: String::new(),
        }
    }

    #[test]
    fn the_humans_own_scope_comes_first_and_only_administered_teams_may_be_configured() {
        let (mine, ops, readers, theirs) = (ScopeId::new(), ScopeId::new(), ScopeId::new(), ScopeId::new());
        let h = human(mine, &[(ops, TeamRole::Admin), (readers, TeamRole::Member)]);
        let owners = Owners::from_parts(&h, vec![(ops, "team:ops".into()), (readers, "team:readers".into())]);
        assert_eq!(owners.label(mine), "you");
        assert_eq!(owners.label(readers), "team:readers");
        assert_eq!(owners.label(theirs), "another owner");
        let refs: Vec<&str> = owners.administered().map(|o| o.reference.as_str()).collect();
        assert_eq!(refs, ["ada@example.com", "team:ops"]);
        assert!(owners.administers(ops) && !owners.administers(readers) && !owners.administers(theirs));
    }
}
