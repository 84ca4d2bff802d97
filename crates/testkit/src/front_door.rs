//! What policy-server does with a request body before any policy runs:
//! axum's 2 MB body limit (413 `length limit exceeded`) and its JSON
//! extractor (400 `Failed to parse the request body as JSON`, which
//! serde_json's nesting limit and a lone UTF-16 surrogate escape both
//! reach). The tests put our host behind the same door, so a hostile body
//! gets the same answer from every runner.

use crate::hostile::BODY_LIMIT;
use admission::AdmissionRequest;

/// A request turned away at the door: the HTTP status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub body: String,
}

/// The AdmissionRequest of an AdmissionReview body, or policy-server's
/// refusal of the body.
pub fn read_review(body: &[u8]) -> Result<AdmissionRequest, Refusal> {
    if body.len() > BODY_LIMIT {
        return Err(Refusal {
            status: 413,
            body: "length limit exceeded".to_owned(),
        });
    }
    let parse_error = |e: &dyn std::fmt::Display| Refusal {
        status: 400,
        body: format!("Failed to parse the request body as JSON: {e}"),
    };
    // serde_json's recursion limit is policy-server's nesting limit: it
    // counts a level into a `Value` as it does into the typed review.
    let review: serde_json::Value = serde_json::from_slice(body).map_err(|e| parse_error(&e))?;
    AdmissionRequest::from_value(review).map_err(|e| Refusal {
        status: 422,
        body: format!(
            "Failed to deserialize the JSON body into the target type: {}",
            crate::with_causes(&e)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::DEEPEST_ACCEPTED;

    #[test]
    fn bodies_past_the_limits_are_refused_as_policy_server_refuses_them() {
        let big = vec![b' '; BODY_LIMIT + 1];
        assert_eq!(read_review(&big).unwrap_err().status, 413);
        let nest = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        // Parsed, then not an AdmissionReview.
        let deepest = read_review(nest(DEEPEST_ACCEPTED).as_bytes()).unwrap_err();
        assert_eq!(deepest.status, 422, "{}", deepest.body);
        let refused = read_review(nest(DEEPEST_ACCEPTED + 1).as_bytes()).unwrap_err();
        assert_eq!(refused.status, 400);
        assert!(refused.body.contains("recursion limit"), "{}", refused.body);
        let lone = br#"{"kind": "AdmissionReview", "request": {"uid": "\ud800"}}"#;
        let refused = read_review(lone).unwrap_err();
        assert_eq!(refused.status, 400, "{}", refused.body);
    }
}
