//! Doorbell rings: each delivered `todo.ready`, once per todo. A ring whose todo is not
//! claimed within `SWITCHBOARD_DOORBELL_ACK_SECONDS` is an unheard doorbell, which the
//! digest reports per endpoint (see `store::digests::sql::UNHEARD`).

use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::Result;

impl Store {
    /// Records that `endpoint`'s doorbell rang for each (todo, queue) of `rings`, in one
    /// statement; a todo that already rang keeps its first ring.
    pub async fn record_doorbells(&self, endpoint: EndpointId, rings: &[(TodoId, String)]) -> Result<()> {
        let (todos, queues): (Vec<TodoId>, Vec<String>) = rings.iter().cloned().unzip();
        let mut conn = self.conn().await?;
        diesel::sql_query(
            "INSERT INTO doorbell_rings (todo_id, endpoint_id, queue) \
             SELECT t, $1, q FROM unnest($2::uuid[], $3::text[]) AS r (t, q) \
             ON CONFLICT (todo_id) DO NOTHING",
        )
        .bind::<SqlUuid, _>(endpoint)
        .bind::<Array<SqlUuid>, _>(todos)
        .bind::<Array<Text>, _>(queues)
        .execute(&mut conn)
        .await?;
        Ok(())
    }
}
