//! The HTTP answer to one admission review, as policy-server sends it:
//! what both ways of asking it ([`super::PolicyServer`], and
//! [`super::one_shot`] for bodies it refuses) read.

use serde_json::Value;

/// The HTTP answer to one admission review.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status: 200 with a verdict, or the server's refusal of the
    /// request itself (400 for a body it cannot parse, 413 for one too
    /// large, 404 for an unknown policy id).
    pub status: u16,
    /// The body as sent.
    pub body: String,
}

impl Answer {
    /// The `response` of the AdmissionReview a 200 carries.
    pub fn response(&self) -> Result<admission::AdmissionResponse, String> {
        if self.status != 200 {
            return Err(format!("HTTP {}: {}", self.status, self.body));
        }
        let mut review: Value = serde_json::from_str(&self.body)
            .map_err(|e| format!("not JSON ({e}): {}", self.body))?;
        let response = review
            .get_mut("response")
            .map(Value::take)
            .ok_or_else(|| format!("no `response` in {}", self.body))?;
        serde_json::from_value(response).map_err(|e| format!("{e}: {}", self.body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_that_are_not_verdicts_say_what_they_are() {
        let refused = Answer {
            status: 413,
            body: "length limit exceeded".into(),
        };
        assert_eq!(
            refused.response().unwrap_err(),
            "HTTP 413: length limit exceeded"
        );
        let ok = Answer {
            status: 200,
            body: r#"{"response": {"uid": "u", "allowed": true}}"#.into(),
        };
        assert!(ok.response().unwrap().allowed);
    }
}
