//! Routing rules (SPEC §6, §13): a webhook's ordered rules decide, per delivery, whether
//! it becomes a todo on some queue, is dropped, or is quarantined, and whether a sink
//! hears about it. Pure: [`parse()`] and [`validate()`] run when rules are saved,
//! [`evaluate()`] on every delivery.

mod evaluate;
mod model;
mod validate;

#[cfg(test)]
mod tests;

pub use evaluate::{BUDGET_EXCEEDED, DEFAULT_BUDGET, Envelope, RoutingDecision, evaluate};
pub use model::{Condition, Match, Route, RoutingRule, RuleAction, RuleSet, RuleTarget, Test};
pub use validate::{
    GLOB_MAX_STARS, JSON_MAX_DEPTH, MAX_ENDPOINTS, MAX_GROUP_DEPTH, MAX_RULES, RULE_MAX_BYTES, RuleError, RuleRef,
    parse, valid_rule_id, validate,
};
