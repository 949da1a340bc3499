//! The table `tools/list` answers from, built once: each tool with its description
//! ([`super::descriptions`]), its input schema and annotations ([`super::tools`]).

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};

use super::descriptions::describe;
use super::tools::ToolName;
use crate::store::endpoints::AgentPrincipal;

/// Every tool as `tools/list` describes it, built once.
pub struct Tools(Vec<(ToolName, Tool)>);

impl Tools {
    /// The table.
    pub fn new() -> Self {
        let tools = ToolName::ALL
            .iter()
            .map(|&t| {
                let annotations = ToolAnnotations::new()
                    .read_only(t.read_only())
                    .destructive(t.deletes())
                    .open_world(matches!(t, ToolName::TestSink | ToolName::PageOwner));
                let tool = Tool::new(t.as_str(), describe(t), Arc::new(t.input_schema())).annotate(annotations);
                (t, tool)
            })
            .collect();
        Tools(tools)
    }

    /// The tools `me` may call now, in table order.
    pub fn granted(&self, me: &AgentPrincipal) -> Vec<Tool> {
        self.0.iter().filter(|(t, _)| t.granted(me)).map(|(_, tool)| tool.clone()).collect()
    }

    /// The tool named `name`, whoever asks.
    pub fn get(&self, name: &str) -> Option<Tool> {
        self.0.iter().find(|(t, _)| t.as_str() == name).map(|(_, tool)| tool.clone())
    }
}

impl Default for Tools {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::grants::DRAIN_FAMILY;

    #[test]
    fn the_drain_family_sees_the_drain_tools_and_presence() {
        let me = AgentPrincipal {
            endpoint_id: crate::domain::ids::EndpointId::new(),
            scope_id: crate::domain::ids::ScopeId::new(),
            slug: "w".into(),
            grants: DRAIN_FAMILY.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        };
        let names: Vec<String> = Tools::new().granted(&me).into_iter().map(|t| t.name.into_owned()).collect();
        assert_eq!(
            names,
            [
                "claim_next",
                "heartbeat",
                "complete",
                "fail",
                "release",
                "claim",
                "get_todo",
                "list_todos",
                "complete_many",
                "fail_many",
                "clock_in",
                "clock_out"
            ]
        );
    }
}
