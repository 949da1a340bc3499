//! Humans, teams, owner scopes and operator tokens.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::Store;
use crate::db::models::HumanRow;
use crate::db::schema::{humans, owner_scopes, team_members, teams};
use crate::db::statement::statement;
use crate::domain::ids::{HumanId, OperatorTokenId, ScopeId, TeamId};
use crate::domain::todo_state::TeamRole;
use crate::domain::tokens::{self, MintedToken, OPERATOR_TOKEN_PREFIX};
use crate::error::{Error, Result};

/// A scope a human may act in, and with which role (a human is admin of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeGrant {
    /// The scope.
    pub scope: ScopeId,
    /// The human's role in it.
    pub role: TeamRole,
}

/// A human's reach: every scope they belong to.
#[derive(Debug, Clone)]
pub struct Reach {
    /// The human.
    pub human: HumanId,
    /// Their personal scope.
    pub personal: ScopeId,
    /// Their scopes with roles (the personal one included).
    pub scopes: Vec<ScopeGrant>,
}

impl Reach {
    /// Every scope id, for queries that take `scope_id = ANY(...)`.
    pub fn scope_ids(&self) -> Vec<ScopeId> {
        self.scopes.iter().map(|s| s.scope).collect()
    }

    /// Whether `scope` is one of the human's.
    pub fn reaches(&self, scope: ScopeId) -> bool {
        self.scopes.iter().any(|s| s.scope == scope)
    }

    /// Whether the human may configure resources in `scope`.
    pub fn is_admin_of(&self, scope: ScopeId) -> bool {
        self.scopes.iter().any(|s| s.scope == scope && s.role == TeamRole::Admin)
    }
}

/// A newly created human and their first operator token (shown once; never in its
/// Debug form).
pub struct NewHuman {
    /// The human.
    pub human: HumanRow,
    /// Their personal owner scope.
    pub scope: ScopeId,
    /// Operator token plaintext.
    pub token: String,
}

impl std::fmt::Debug for NewHuman {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewHuman").field("human", &self.human).field("scope", &self.scope).finish_non_exhaustive()
    }
}

/// Who an owner reference (`E` or `team:T`) names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerRef {
    /// A human, by email.
    Human(String),
    /// A team, by name.
    Team(String),
}

impl OwnerRef {
    /// Parses `team:T` or an email.
    pub fn parse(raw: &str) -> Result<Self> {
        let raw = raw.trim();
        if raw.chars().any(char::is_control) {
            return Err(Error::invalid("owner", "contains control characters"));
        }
        match raw.strip_prefix("team:") {
            Some(t) if !t.trim().is_empty() => Ok(OwnerRef::Team(t.trim().to_owned())),
            Some(_) => Err(Error::invalid("owner", "team name is empty")),
            None if raw.contains('@') => Ok(OwnerRef::Human(raw.to_owned())),
            None => Err(Error::invalid("owner", "expected an email or team:<name>")),
        }
    }

    /// Parses a fan-out grantee: as [`OwnerRef::parse`], and within what an account can
    /// be called (an email of 3–320 characters, a team name of 1–100 bytes without
    /// `:`), since a grant is kept for an account that does not exist yet: a reference
    /// no account could ever have is refused (422), not kept.
    pub fn parse_grantee(raw: &str) -> Result<Self> {
        let owner = Self::parse(raw)?;
        match &owner {
            OwnerRef::Human(email) if !(3..=320).contains(&email.chars().count()) => {
                Err(Error::invalid("owner", "not an email address"))
            }
            OwnerRef::Team(team) if team.len() > 100 || team.contains(':') => {
                Err(Error::invalid("owner", "a team name is 1–100 bytes without ':'"))
            }
            _ => Ok(owner),
        }
    }
}

fn unique_violation(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _))
}

statement! {
    static OWNER_OF_HUMAN =
        "SELECT s.id FROM owner_scopes s JOIN humans h ON h.id = s.human_id WHERE lower(h.email) = lower($1)";
    static OWNER_OF_TEAM =
        "SELECT s.id FROM owner_scopes s JOIN teams t ON t.id = s.team_id WHERE lower(t.name) = lower($1)";
    static TEAM_BY_NAME = "SELECT id FROM teams WHERE lower(name) = lower($1)";

    static OPERATOR_BY_TOKEN = "SELECT human_id FROM operator_tokens WHERE token_hash = $1 AND revoked_at IS NULL \
        AND (expires_at IS NULL OR expires_at > now())";
    static SCOPES_OF_TEAMS = "SELECT s.id, t.name FROM owner_scopes s JOIN teams t ON t.id = s.team_id \
        WHERE s.id = ANY($1) ORDER BY lower(t.name)";
}

impl Store {
    /// Creates a human with a personal scope and an operator token, optionally with a
    /// password hash (argon2id PHC string).
    pub async fn create_human(&self, email: &str, name: &str, password_hash: Option<String>) -> Result<NewHuman> {
        let email = email.trim().to_owned();
        // Characters, as the column's CHECK counts them.
        if !(3..=320).contains(&email.chars().count()) || !email.contains('@') {
            return Err(Error::invalid("email", "not an email address"));
        }
        let name = name.trim().to_owned();
        if name.is_empty() || name.chars().count() > 200 {
            return Err(Error::invalid("name", "must be 1–200 bytes"));
        }
        let mut conn = self.conn().await?;
        let minted = tokens::mint(OPERATOR_TOKEN_PREFIX);
        let minted_ref = &minted;
        let out = conn
            .transaction::<_, diesel::result::Error, _>(async move |conn| {
                let id = HumanId::new();
                let human: HumanRow = diesel::insert_into(humans::table)
                    .values((
                        humans::id.eq(id.0),
                        humans::email.eq(&email),
                        humans::display_name.eq(&name),
                        humans::password_hash.eq(password_hash),
                    ))
                    .returning(HumanRow::as_returning())
                    .one_row(conn)
                    .await?;
                let scope = ScopeId::new();
                diesel::insert_into(owner_scopes::table)
                    .values((owner_scopes::id.eq(scope.0), owner_scopes::human_id.eq(id.0)))
                    .execute(conn)
                    .await?;
                insert_operator_token(conn, id, minted_ref, "created with the human").await?;
                Ok((human, scope))
            })
            .await;
        match out {
            Ok((human, scope)) => Ok(NewHuman { human, scope, token: minted.plaintext }),
            Err(e) if unique_violation(&e) => Err(Error::Conflict("a human with this email already exists".into())),
            Err(e) => Err(e.into()),
        }
    }

    /// Mints another operator token for a human.
    pub async fn mint_operator_token(&self, human: HumanId, label: &str) -> Result<String> {
        let mut conn = self.conn().await?;
        let minted = tokens::mint(OPERATOR_TOKEN_PREFIX);
        insert_operator_token(&mut conn, human, &minted, label).await?;
        Ok(minted.plaintext)
    }

    /// Creates a team (with its scope) whose first admin is the human with `admin_email`.
    pub async fn create_team(&self, name: &str, admin_email: &str) -> Result<(TeamId, String, ScopeId)> {
        let name = name.trim().to_owned();
        if name.is_empty() || name.len() > 100 || name.contains(':') {
            return Err(Error::invalid("name", "must be 1–100 bytes without ':'"));
        }
        let mut conn = self.conn().await?;
        let admin = self
            .human_by_email_on(&mut conn, admin_email)
            .await?
            .ok_or_else(|| Error::invalid("admin", "no human with this email"))?;
        let out = conn
            .transaction::<_, diesel::result::Error, _>(async move |conn| {
                let team = TeamId::new();
                diesel::insert_into(teams::table)
                    .values((teams::id.eq(team.0), teams::name.eq(&name)))
                    .execute(conn)
                    .await?;
                let scope = ScopeId::new();
                diesel::insert_into(owner_scopes::table)
                    .values((owner_scopes::id.eq(scope.0), owner_scopes::team_id.eq(team.0)))
                    .execute(conn)
                    .await?;
                diesel::insert_into(team_members::table)
                    .values((
                        team_members::team_id.eq(team.0),
                        team_members::human_id.eq(admin.id.0),
                        team_members::role.eq(TeamRole::Admin),
                    ))
                    .execute(conn)
                    .await?;
                Ok((team, name, scope))
            })
            .await;
        match out {
            Ok(v) => Ok(v),
            Err(e) if unique_violation(&e) => Err(Error::Conflict("a team with this name already exists".into())),
            Err(e) => Err(e.into()),
        }
    }

    /// Adds (or changes the role of) a team member.
    pub async fn add_team_member(&self, team: TeamId, human: HumanId, role: TeamRole) -> Result<()> {
        let mut conn = self.conn().await?;
        diesel::insert_into(team_members::table)
            .values((team_members::team_id.eq(team.0), team_members::human_id.eq(human.0), team_members::role.eq(role)))
            .on_conflict((team_members::team_id, team_members::human_id))
            .do_update()
            .set(team_members::role.eq(role))
            .execute(&mut conn)
            .await?;
        Ok(())
    }

    /// A team by name (case-insensitive).
    pub async fn team_by_name(&self, name: &str) -> Result<Option<TeamId>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
        }
        let mut conn = self.conn().await?;
        let row: Option<Row> = TEAM_BY_NAME.query().bind::<Text, _>(name.trim()).one_row(&mut conn).await.optional()?;
        Ok(row.map(|r| TeamId(r.id)))
    }

    /// Revokes a human's live operator tokens (only those with `label`, when given);
    /// returns how many.
    pub async fn revoke_operator_tokens(&self, human: HumanId, label: Option<&str>) -> Result<usize> {
        use crate::db::schema::operator_tokens as ot;
        let mut conn = self.conn().await?;
        let mut q =
            diesel::update(ot::table).filter(ot::human_id.eq(human.0)).filter(ot::revoked_at.is_null()).into_boxed();
        if let Some(label) = label {
            q = q.filter(ot::label.eq(label));
        }
        Ok(q.set(ot::revoked_at.eq(diesel::dsl::now)).execute(&mut conn).await?)
    }

    /// A human by email (case-insensitive).
    pub async fn human_by_email(&self, email: &str) -> Result<Option<HumanRow>> {
        let mut conn = self.conn().await?;
        self.human_by_email_on(&mut conn, email).await
    }

    async fn human_by_email_on(&self, conn: &mut AsyncPgConnection, email: &str) -> Result<Option<HumanRow>> {
        Ok(humans::table
            .filter(
                diesel::dsl::sql::<diesel::sql_types::Bool>("lower(email) = lower(")
                    .bind::<Text, _>(email.trim())
                    .sql(")"),
            )
            .select(HumanRow::as_select())
            .first(conn)
            .await
            .optional()?)
    }

    /// Resolves `E` / `team:T` to an owner scope.
    pub async fn resolve_owner(&self, owner: &OwnerRef) -> Result<ScopeId> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
        }
        let (statement, name) = match owner {
            OwnerRef::Human(email) => (&OWNER_OF_HUMAN, email),
            OwnerRef::Team(team) => (&OWNER_OF_TEAM, team),
        };
        let mut conn = self.conn().await?;
        let row: Option<Row> = statement.query().bind::<Text, _>(name).one_row(&mut conn).await.optional()?;

        row.map(|r| ScopeId(r.id)).ok_or_else(|| Error::invalid("owner", "no such human or team"))
    }

    /// Every scope the human belongs to, with roles.
    pub async fn reach_of(&self, human: HumanId) -> Result<Reach> {
        let mut conn = self.conn().await?;
        reach_of(&mut conn, human).await
    }

    /// The human holding a live operator token, with their reach; `None` if the token
    /// is unknown, revoked or expired.
    pub async fn authenticate_operator(&self, token: &str) -> Result<Option<Reach>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            human_id: uuid::Uuid,
        }
        let mut conn = self.conn().await?;
        let hash = tokens::sha256(token.as_bytes());
        let row: Option<Row> =
            OPERATOR_BY_TOKEN.query().bind::<Bytea, _>(hash.as_slice()).one_row(&mut conn).await.optional()?;
        match row {
            Some(r) => Ok(Some(reach_of(&mut conn, HumanId(r.human_id)).await?)),
            None => Ok(None),
        }
    }

    /// The names of the team scopes among `scopes` (personal scopes have none), by name.
    pub async fn team_names(&self, scopes: &[ScopeId]) -> Result<Vec<(ScopeId, String)>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::Uuid)]
            id: uuid::Uuid,
            #[diesel(sql_type = diesel::sql_types::Text)]
            name: String,
        }
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = SCOPES_OF_TEAMS
            .query()
            .bind::<diesel::sql_types::Array<diesel::sql_types::Uuid>, _>(ids)
            .load(&mut conn)
            .await?;
        Ok(rows.into_iter().map(|r| (ScopeId(r.id), r.name)).collect())
    }
}

async fn insert_operator_token(
    conn: &mut AsyncPgConnection,
    human: HumanId,
    minted: &MintedToken,
    label: &str,
) -> QueryResult<()> {
    use crate::db::schema::operator_tokens as ot;
    diesel::insert_into(ot::table)
        .values((
            ot::id.eq(OperatorTokenId::new().0),
            ot::human_id.eq(human.0),
            ot::token_hash.eq(minted.hash.as_slice()),
            ot::token_prefix.eq(&minted.display_prefix),
            ot::label.eq(label),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

statement! {
    static REACH_SCOPES = "SELECT id, 'admin' AS role, true AS personal FROM owner_scopes WHERE human_id = $1 \
        UNION ALL \
        SELECT s.id, m.role, false FROM owner_scopes s JOIN team_members m ON m.team_id = s.team_id WHERE m.human_id = $1";
}

/// Every scope `human` belongs to, on a connection the caller holds.
pub(super) async fn reach_of(conn: &mut AsyncPgConnection, human: HumanId) -> Result<Reach> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = SqlUuid)]
        id: uuid::Uuid,
        #[diesel(sql_type = Text)]
        role: TeamRole,
        #[diesel(sql_type = diesel::sql_types::Bool)]
        personal: bool,
    }
    let rows: Vec<Row> = REACH_SCOPES.query().bind::<SqlUuid, _>(human.0).load(conn).await?;
    let personal = rows.iter().find(|r| r.personal).map(|r| ScopeId(r.id)).ok_or(Error::NotFound)?;
    Ok(Reach {
        human,
        personal,
        scopes: rows.into_iter().map(|r| ScopeGrant { scope: ScopeId(r.id), role: r.role }).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grantee_is_a_well_formed_email_or_team_name_whether_or_not_it_exists() {
        assert_eq!(
            OwnerRef::parse_grantee(" Ghost@Example.com ").unwrap(),
            OwnerRef::Human("Ghost@Example.com".into())
        );
        assert_eq!(OwnerRef::parse_grantee("team: crew ").unwrap(), OwnerRef::Team("crew".into()));
        let long_email = format!("{}@example.com", "a".repeat(320));
        let long_team = format!("team:{}", "t".repeat(101));
        for refused in
            ["", "nobody", "@", "a@\0b", "team:", "team:a:b", "a@b\u{1}", long_email.as_str(), long_team.as_str()]
        {
            assert!(matches!(OwnerRef::parse_grantee(refused), Err(Error::InvalidArgument(_))), "{refused:?}");
        }
    }
}
