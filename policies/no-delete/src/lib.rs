//! `no-delete`: Cozystack's deletion guardrail as a Kubewarden policy.
//!
//! Cozystack ships the ValidatingAdmissionPolicy `cozystack-no-delete-guardrail`:
//! a DELETE of any object whose existing labels carry
//! `platform.cozystack.io/no-delete` with the exact value `"true"` is denied,
//! for everyone; other values do not protect. This policy has the same
//! semantics and adds what the VAP cannot express: exemptions, and an opt-in
//! rule that only named groups may lift the protection (remove or change the
//! label), so lifting it becomes an auditable break-glass step. That rule
//! never refuses the platform's own writers ([`is_platform_writer`]): they
//! rewrite labelled objects as part of normal operation and must not be
//! blocked by it. Nobody is exempt from the DELETE rule by default.

pub mod rules;
mod settings;

use shared::apps::PLATFORM_GROUPS;
use shared::{Field, FieldError, Operation, Refusal, Request, Review, Selection, User, Verdict};

pub use rules::RULES;
pub use settings::{LabelRemoval, Settings};

/// What the rule reads of each object.
pub const READS: Selection = Selection::Paths(&["metadata.labels"]);

shared::policy!(Settings, evaluate, READS);

/// The only value that protects, as in the VAP binding's `matchLabels`.
const PROTECTED: &str = "true";

/// The group Kubernetes gives every service account of a namespace, minus
/// the namespace (`system:serviceaccounts:<namespace>`).
const SERVICE_ACCOUNT_GROUP_PREFIX: &str = "system:serviceaccounts:";

/// Platform writers outside [`PLATFORM_GROUPS`]: the installer's
/// pre-install/pre-upgrade Job that runs `kubectl label --overwrite namespace
/// cozy-system ... platform.cozystack.io/no-delete=true` from `kube-system`
/// (Cozystack v1.6.2 `packages/core/installer/templates/cozy-system-labels.yaml`).
/// Only this account: the rest of `kube-system` is not the platform.
pub const PLATFORM_USERS: &[&str] = &["system:serviceaccount:kube-system:cozy-system-labeler"];

/// Whether `user` is one of the platform's own writers of labelled objects,
/// which the `labelRemoval` guard never refuses:
///
/// - a member of [`PLATFORM_GROUPS`] (`system:serviceaccounts:cozy-system`:
///   cozystack-api, which rebuilds a HelmRelease's labels on every update of
///   its application; cozystack-operator, which server-side applies the CRDs;
///   the migration hook, which re-applies `cozystack-version`;
///   `system:serviceaccounts:cozy-fluxcd`: Flux's controllers and the
///   flux-shard-operator);
/// - a service account of one of those namespaces whose request carries no
///   groups (the user name alone, `system:serviceaccount:cozy-system:…`);
/// - one of [`PLATFORM_USERS`].
pub fn is_platform_writer(user: &User<'_>) -> bool {
    let in_platform_group = |group: &str| PLATFORM_GROUPS.contains(&group);
    PLATFORM_USERS.contains(&user.username.as_ref())
        || user.groups.iter().any(|g| in_platform_group(g))
        || user
            .username
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(namespace, _)| {
                PLATFORM_GROUPS
                    .iter()
                    .any(|g| g.strip_prefix(SERVICE_ACCOUNT_GROUP_PREFIX) == Some(namespace))
            })
}

/// The protecting label of `object`: its field, and whether it protects.
fn protection<'a>(object: &Field<'a>, key: &str) -> Result<(Field<'a>, bool), FieldError> {
    let label = object.at("metadata.labels")?.field(key)?;
    let protects = label.string()? == Some(PROTECTED);
    Ok((label, protects))
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if settings.exemptions.exempts(&request.user) {
        return Ok(Verdict::allow());
    }
    match request.operation {
        Operation::Delete => deletion(request, settings),
        Operation::Update => match &settings.label_removal {
            // The platform rewrites labelled objects as it runs (and
            // cozystack-api drops the label from the HelmRelease it
            // rebuilds): the guard must never stop it.
            Some(_) if is_platform_writer(&request.user) => Ok(Verdict::allow()),
            Some(guard) => label_removal(request, settings, guard),
            None => Ok(Verdict::allow()),
        },
        Operation::Create | Operation::Connect => Ok(Verdict::allow()),
    }
}

fn deletion(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    let old_object = request.required_old_object()?;
    let (label, protects) = protection(&old_object, &settings.label_key)?;
    let mut review = Review::new();
    if protects {
        review.violation(
            rules::PROTECTED_DELETE,
            label.path(),
            format!(
                "Deletion blocked: {} carries {key}={PROTECTED}. To delete it, first lift the protection: \
                 kubectl label {} {}{} {key}-",
                request.describe(),
                request.kubectl_resource(),
                request.name,
                request.kubectl_namespace_flag(),
                key = settings.label_key,
            ),
        );
    }
    Ok(review.verdict(Refusal::Forbidden))
}

fn label_removal(
    request: &Request<'_>,
    settings: &Settings,
    guard: &LabelRemoval,
) -> Result<Verdict, FieldError> {
    let (_, was_protected) = protection(&request.old_object(), &settings.label_key)?;
    if !was_protected {
        return Ok(Verdict::allow());
    }
    let (label, still_protected) = protection(&request.object(), &settings.label_key)?;
    let allowed = request
        .user
        .groups
        .iter()
        .any(|group| guard.allowed_groups.iter().any(|g| g == group));
    let mut review = Review::new();
    if !still_protected && !allowed {
        review.violation(
            rules::PROTECTION_LIFTED,
            label.path(),
            format!(
                "{} is protected from deletion and only members of {} may lift the protection; \
                 keep {}={PROTECTED} or ask one of them",
                request.describe(),
                guard.allowed_groups.join(", "),
                settings.label_key,
            ),
        );
    }
    Ok(review.verdict(Refusal::Forbidden))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn user(name: &'static str, groups: &[&'static str]) -> User<'static> {
        User {
            username: Cow::Borrowed(name),
            groups: groups.iter().map(|g| Cow::Borrowed(*g)).collect(),
        }
    }

    #[test]
    fn platform_writers_are_the_platform_s_accounts_only() {
        let writers = [
            user(
                "system:serviceaccount:cozy-system:cozystack-api",
                &["system:serviceaccounts:cozy-system"],
            ),
            user("system:serviceaccount:cozy-system:cozystack", &[]),
            user("system:serviceaccount:cozy-fluxcd:flux", &[]),
            user(
                "system:serviceaccount:kube-system:cozy-system-labeler",
                &["system:serviceaccounts:kube-system"],
            ),
            user("someone", &["system:serviceaccounts:cozy-fluxcd"]),
        ];
        for writer in &writers {
            assert!(is_platform_writer(writer), "{writer:?}");
        }
        let others = [
            user("alice@example.org", &["cozystack-cluster-admin"]),
            user(
                "system:serviceaccount:kube-system:namespace-controller",
                &["system:serviceaccounts:kube-system"],
            ),
            user("system:serviceaccount:cozy-system-x:cozystack-api", &[]),
            user("system:serviceaccount:cozy-system", &[]),
            user("cozy-system:cozystack-api", &[]),
        ];
        for other in &others {
            assert!(!is_platform_writer(other), "{other:?}");
        }
    }
}

/// The shipped manifest and the chart's template, which sends UPDATE once
/// the guard is on, agree with the rule.
#[cfg(test)]
mod manifests {
    use super::*;

    fn read(path: &str) -> String {
        let path = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_bundle_sends_delete_only() {
        let manifest = read("deploy/bundle/policies/no-delete.yaml");
        assert!(
            manifest.contains("    operations: [\"DELETE\"]\n"),
            "{manifest}"
        );
        assert!(manifest.contains("  settings: {}\n"), "{manifest}");
    }

    #[test]
    fn the_guard_adds_update_and_skips_exactly_the_platform_writers() {
        let template = read("policies/no-delete/cluster-admission-policy.yaml");
        assert!(
            template.contains(
                r#"(ternary (list "DELETE" "UPDATE") (list "DELETE") (not (empty $labelRemoval)))"#
            ),
            "{template}"
        );
        let condition = template
            .split("expression: >-\n")
            .nth(1)
            .and_then(|rest| rest.split("{{-").next())
            .expect("the matchCondition's expression");
        let quoted: Vec<&str> = condition.split('\'').skip(1).step_by(2).collect();
        let mut expected = vec!["UPDATE"];
        expected.extend(PLATFORM_GROUPS);
        expected.extend(PLATFORM_USERS);
        assert_eq!(quoted, expected, "{condition}");
    }
}
