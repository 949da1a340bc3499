//! Forms that may be refused: which refusals go back to the human on the form itself
//! (what they typed can be fixed), and the page that shows it with the refusal's status.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use maud::Markup;

use super::error::BoardError;
use super::respond;
use super::session::Human;
use crate::error::Error;

/// `Ok(e)` when `e` is about what the human typed or chose (invalid input, a name
/// already taken, a team they do not administer), to be shown on the form again;
/// anything else (not found, the database) is the Board's usual refusal page.
pub fn refusal(e: Error) -> Result<Error, BoardError> {
    match e {
        Error::InvalidArgument(_)
        | Error::Conflict(_)
        | Error::Forbidden(_)
        | Error::EncryptionRequired
        | Error::ForbiddenScheme(_)
        | Error::ForbiddenTarget
        | Error::ReferenceOutOfScope(_)
        | Error::DestinationMismatch(_) => Ok(e),
        other => Err(BoardError::App(other)),
    }
}

/// A signed-in page answered with `status` (a form shown again after a refusal is a
/// 4xx, so that scripts and tests see the refusal; browsers show it all the same).
pub fn page_with_status(human: &Human, status: StatusCode, body: Markup) -> HttpResponse {
    let mut resp = respond::page(human, body);
    *resp.status_mut() = status;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_human_typed_goes_back_to_the_form_and_the_rest_is_a_refusal_page() {
        for e in
            [Error::invalid("slug", "bad"), Error::Conflict("taken".into()), Error::Forbidden("admins only".into())]
        {
            assert!(refusal(e).is_ok());
        }
        for e in [Error::NotFound, Error::internal("db"), Error::Unavailable("db".into())] {
            assert!(refusal(e).is_err());
        }
    }
}
