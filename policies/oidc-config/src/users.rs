//! `spec.oidc.users`: what the schemas and templates require of each entry,
//! and what the user jobs do with repeated emails.
//!
//! - Kubernetes: the schema requires `email` and `role` (`admin|view`) in
//!   every mode; the templates read the list only when the mode is not
//!   `None`. The post-install/post-upgrade Job `<release>-oidc-bootstrap`
//!   (`oidc-rbac-job.yaml`) runs `kubectl apply` of one ClusterRoleBinding
//!   per entry, named `cozystack-oidc-` + the first 16 hex digits of
//!   sha256(`<release>-<email>`), under `set -euo pipefail`. The name
//!   depends on the email only, and a ClusterRoleBinding's `roleRef` is
//!   immutable, so the same email with another role (twice in the list,
//!   or changed on an existing cluster) makes `kubectl apply` fail, and
//!   with it the Job and the release.
//! - Monitoring: the template checks (role, email pattern, `secretRef` +
//!   `users`) run in every mode, even `None`. The users Job
//!   (`oidc-users-job.yaml`) iterates the emails one per line and looks the
//!   role up with `jq '.[] | select(.email == $e) | .role'`: a repeated
//!   email yields one role per entry ("Admin\nViewer", or "Admin\nAdmin"),
//!   which Grafana refuses as a role, and the Job fails (`exit 1`). Grafana
//!   matches logins and emails without regard to case, so two entries that
//!   differ only in case name one account, and with different roles the
//!   last one wins on every run.

use shared::first_seen::FirstSeen;
use shared::{Field, FieldError, Review};

use crate::chart::{Chart, Mode};
use crate::email;

/// One entry of `spec.oidc.users`.
#[derive(Debug)]
pub struct User<'a> {
    pub entry: Field<'a>,
    pub email: Field<'a>,
    pub role: Field<'a>,
    pub email_text: Option<&'a str>,
    pub role_text: Option<&'a str>,
    /// The chart accepts the entry (no violation so far).
    pub valid: bool,
}

/// The entries; a list that is not a list, an entry that is not an object,
/// or an email or role that is not a string is malformed (400).
pub fn read<'a>(users: &Field<'a>) -> Result<Vec<User<'a>>, FieldError> {
    users
        .items()?
        .map(|entry| {
            let [email, role] = entry.members(["email", "role"])?;
            let email_text = email.string()?;
            let role_text = role.string()?;
            Ok(User {
                entry,
                email,
                role,
                email_text,
                role_text,
                valid: true,
            })
        })
        .collect()
}

const REQUIRED: &str = "is required: the chart's schema requires email and role for every user.";

/// A hint when a role is right but for the other chart's spelling.
fn case_hint(chart: Chart, role: &str) -> &'static str {
    let near = chart
        .roles()
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(role));
    match (near, chart) {
        (false, _) => "",
        (true, Chart::Kubernetes) => " Kubernetes roles are lowercase.",
        (true, Chart::Monitoring) => " Grafana roles are capitalised.",
    }
}

/// The schema (Kubernetes) and template (Monitoring) checks of each entry.
pub fn check_entries(chart: Chart, mode: Mode, users: &mut [User<'_>], review: &mut Review) {
    for user in users.iter_mut() {
        let mut bad = false;
        match chart {
            Chart::Kubernetes => check_kubernetes(mode, user, review, &mut bad),
            Chart::Monitoring => check_monitoring(user, review, &mut bad),
        }
        user.valid = !bad;
    }
}

fn check_kubernetes(mode: Mode, user: &User<'_>, review: &mut Review, bad: &mut bool) {
    match user.role_text {
        None => {
            *bad = true;
            review.violation(
                crate::rules::USER_ROLE,
                user.role.path(),
                "is required and must be one of admin, view: the chart's schema requires it \
                 (admin binds ClusterRole cluster-admin, view binds ClusterRole view).",
            );
        }
        Some(role) if !Chart::Kubernetes.roles().contains(&role) => {
            *bad = true;
            review.violation(crate::rules::USER_ROLE,
                user.role.path(),
                format!(
                    "{role:?} is not one of the allowed values admin, view; the chart's schema rejects it \
                     (admin binds ClusterRole cluster-admin, view binds ClusterRole view).{}",
                    case_hint(Chart::Kubernetes, role)
                ),
            );
        }
        Some(_) => {}
    }
    match user.email_text {
        None => {
            *bad = true;
            review.violation(crate::rules::USER_EMAIL, user.email.path(), REQUIRED);
        }
        Some("") if mode.is_enabled() => {
            *bad = true;
            review.violation(
                crate::rules::USER_EMAIL,
                user.email.path(),
                "must not be empty: the chart makes it the User subject of a ClusterRoleBinding, \
                 which Kubernetes refuses without a name, so the oidc-bootstrap Job fails.",
            );
        }
        Some(text) if mode.is_enabled() && !text.contains('@') => {
            review.warning(crate::rules::USER_EMAIL_NOT_ADDRESS,
                user.email.path(),
                "is not an email address: the tenant kube-apiserver names users by the token's email claim, so this never matches.",
            );
        }
        Some(_) => {}
    }
}

fn check_monitoring(user: &User<'_>, review: &mut Review, bad: &mut bool) {
    match user.role_text {
        None | Some("") => {
            *bad = true;
            review.violation(crate::rules::USER_ROLE,
                user.role.path(),
                "is required and must be one of Admin, Editor, Viewer. Omitting the field would render null \
                 into the Grafana admin API body and fail the post-install users-Job with HTTP 400.",
            );
        }
        Some(role) if !Chart::Monitoring.roles().contains(&role) => {
            *bad = true;
            review.violation(
                crate::rules::USER_ROLE,
                user.role.path(),
                format!(
                    "{role:?} is not one of the allowed values Admin, Editor, Viewer.{}",
                    case_hint(Chart::Monitoring, role)
                ),
            );
        }
        Some(_) => {}
    }
    match user.email_text {
        None => {
            *bad = true;
            review.violation(crate::rules::USER_EMAIL, user.email.path(), REQUIRED);
        }
        Some(text) if !email::matches_pattern(text) => {
            *bad = true;
            review.violation(crate::rules::USER_EMAIL,
                user.email.path(),
                format!(
                    "{text:?} does not match the conservative email pattern {}. Whitespace, quoted literals, \
                     and non-ASCII characters are rejected on template level so the reconcile-Job's shell \
                     handling never has to defend against malformed input.",
                    email::PATTERN
                ),
            );
        }
        Some(_) => {}
    }
}

/// Repeated emails, for a mode in which the chart's job uses the list.
/// Only entries the chart accepts are compared, each with the first
/// earlier accepted entry of the same email (or, for Monitoring, of the
/// same email in another letter case with another role).
pub fn check_duplicates(chart: Chart, users: &mut [User<'_>], review: &mut Review) {
    // Grafana's view of each email; empty where it is not compared.
    let lowercase: Vec<String> = users
        .iter()
        .map(|user| match (chart, user.email_text) {
            (Chart::Monitoring, Some(email)) => email.to_ascii_lowercase(),
            _ => String::new(),
        })
        .collect();
    let mut exact = Earlier::default();
    let mut folded = Earlier::default();
    for (later, lower) in lowercase.iter().enumerate() {
        let other_case = (chart == Chart::Monitoring).then_some((&folded, lower.as_str()));
        check_duplicate(chart, users, later, &exact, other_case, review);
        let Some(user) = users.get(later) else {
            continue;
        };
        let (Some(email), true) = (user.email_text, user.valid) else {
            continue;
        };
        exact.insert(email, user.role_text, later);
        folded.insert(lower, user.role_text, later);
    }
}

/// Earlier accepted entries: their index by email, their role as the tag.
type Earlier<'a> = FirstSeen<&'a str, Option<&'a str>, usize>;

/// Compares entry `later` with the entries before it: by exact email, and
/// for Monitoring by lowercased email (`other_case`: those entries and this
/// one's key).
fn check_duplicate(
    chart: Chart,
    users: &mut [User<'_>],
    later: usize,
    exact: &Earlier<'_>,
    other_case: Option<(&Earlier<'_>, &str)>,
    review: &mut Review,
) {
    let Some(user) = users.get(later) else {
        return;
    };
    let (Some(email), Some(role), true) = (user.email_text, user.role_text, user.valid) else {
        return;
    };
    let same = exact.first(email);
    let other_case = other_case.and_then(|(folded, key)| folded.first_other(key, &user.role_text));
    let clash = match (same, other_case) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let Some(earlier) = clash.and_then(|index| users.get(index)) else {
        return;
    };
    let earlier_email = earlier.email_text.unwrap_or_default();
    let earlier_role = earlier.role_text.unwrap_or_default();
    let first = earlier.entry.path();
    let violation = match chart {
        Chart::Kubernetes if earlier_role == role => {
            review.warning(crate::rules::USER_REPEATED,
                    user.entry.path(),
                    format!("repeats {first} (same email and role); the chart applies one ClusterRoleBinding twice. Remove it."),
                );
            false
        }
        Chart::Kubernetes => {
            review.violation(crate::rules::DUPLICATE_EMAIL,
                    user.email.path(),
                    format!(
                        "{email:?} is already {first} with role {earlier_role:?}: both entries map to one ClusterRoleBinding, \
                         whose roleRef cannot change, so the oidc-bootstrap Job fails. Keep one entry per email."
                    ),
                );
            true
        }
        Chart::Monitoring if earlier_email == email => {
            review.violation(crate::rules::DUPLICATE_EMAIL,
                    user.email.path(),
                    format!(
                        "{email:?} is already {first}: the users Job looks the role up by email and gets one line per entry, \
                         which Grafana refuses as a role, so the Job and the release fail. Keep one entry per email."
                    ),
                );
            true
        }
        Chart::Monitoring => {
            review.violation(crate::rules::DUPLICATE_EMAIL,
                    user.email.path(),
                    format!(
                        "{email:?} and {first} ({earlier_email:?}) differ only in letter case but ask for roles {role:?} and \
                         {earlier_role:?}; Grafana matches accounts by email ignoring case, so the last entry wins on every run. \
                         Keep one entry."
                    ),
                );
            true
        }
    };
    if violation && let Some(user) = users.get_mut(later) {
        user.valid = false;
    }
}

/// An `(email, role)` pair.
pub type Binding<'a> = (&'a str, &'a str);

/// What the stored object (`oldObject`) says about the bindings the
/// chart may have made.
#[derive(Debug)]
pub enum Stored<'a> {
    /// Its mode was `System` or `CustomConfig`: the chart bound these users.
    Bound(Vec<Binding<'a>>),
    /// Its mode was `None` (or unset): the chart bound nobody then, but it
    /// prunes nothing in mode `None` either, so bindings from an earlier
    /// `System` or `CustomConfig` mode remain. These users were listed.
    ListedWhileNone(Vec<Binding<'a>>),
}

/// The stored object's users and what its mode made of them; `None` when
/// it cannot be read or its mode is outside the enum (the rules then do not
/// apply).
pub fn stored<'a>(old: &Field<'a>) -> Option<Stored<'a>> {
    let read = || -> Result<Option<Stored<'a>>, FieldError> {
        let [mode, users] = old.at("spec.oidc")?.members(["mode", "users"])?;
        let users: Vec<Binding<'a>> = read(&users)?
            .into_iter()
            .filter_map(|user| Some((user.email_text?, user.role_text?)))
            .collect();
        Ok(match mode.string()?.map_or(Mode::None, Mode::parse) {
            Mode::None => Some(Stored::ListedWhileNone(users)),
            Mode::Invalid => None,
            Mode::System | Mode::CustomConfig => Some(Stored::Bound(users)),
        })
    };
    read().ok().flatten()
}

/// The stored bindings with a role the chart knows, by email, the roles
/// as tags: looked up once per entry instead of scanned.
fn known_roles<'s, 'b>(before: &'s [Binding<'b>]) -> (Earlier<'b>, &'s [Binding<'b>]) {
    let mut roles = Earlier::default();
    for (index, &(email, role)) in before.iter().enumerate() {
        if Chart::Kubernetes.roles().contains(&role) {
            roles.insert(email, Some(role), index);
        }
    }
    (roles, before)
}

/// The earlier role of `user`'s email in `before`, when it was another
/// role the chart knows.
fn earlier_role<'b>(
    user: &User<'_>,
    (roles, before): &(Earlier<'b>, &[Binding<'b>]),
) -> Option<&'b str> {
    let (Some(email), Some(_), true) = (user.email_text, user.role_text, user.valid) else {
        return None;
    };
    let index = roles.first_other(email, &user.role_text)?;
    before.get(index).map(|&(_, role)| role)
}

/// Kubernetes, UPDATE: a role changed for an email the chart has already
/// bound. The binding keeps its name and `roleRef`, so `kubectl apply`
/// fails until the entry is removed (the Job prunes the binding) and added
/// back.
pub fn check_role_changes(users: &[User<'_>], before: &[Binding<'_>], review: &mut Review) {
    let before = known_roles(before);
    for user in users {
        let (Some(email), Some(role), Some(old_role)) =
            (user.email_text, user.role_text, earlier_role(user, &before))
        else {
            continue;
        };
        review.violation(crate::rules::BOUND_ROLE_CHANGE,
            user.role.path(),
            format!(
                "changes the role of {email:?} from {old_role:?} to {role:?}: the chart's ClusterRoleBinding for this email \
                 keeps its roleRef, which Kubernetes cannot change, so the oidc-bootstrap Job would fail. \
                 Remove the entry, apply, then add it back with the new role."
            ),
        );
    }
}

/// Kubernetes, UPDATE from a stored mode `None`: a role changed against
/// the list stored then. Mode `None` made no binding, but the chart's Job
/// prunes nothing in mode `None` (it exits after cleaning the control
/// plane) and the pre-delete cleanup renders only when the mode is not
/// `None`, so a binding from an earlier `System` or `CustomConfig` mode may
/// still hold the old role. The stored object cannot show whether there
/// was one: a warning.
pub fn warn_role_changes_after_none(
    users: &[User<'_>],
    before: &[Binding<'_>],
    review: &mut Review,
) {
    let before = known_roles(before);
    for user in users {
        if let Some(old_role) = earlier_role(user, &before) {
            review.warning(crate::rules::ROLE_CHANGE_FROM_NONE,
                user.role.path(),
                format!(
                    "was {old_role:?} while mode was None, which prunes no ClusterRoleBindings: one bound by an earlier \
                     System or CustomConfig mode keeps its roleRef and fails the oidc-bootstrap Job. \
                     Remove the entry, apply, then add it back."
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::Value;
    use shared::verdict::Refusal;

    /// The lines `check_duplicates` writes for `users` (`(email, role)`),
    /// every entry accepted by the schema.
    fn duplicates(chart: Chart, users: &[(&str, &str)]) -> Vec<String> {
        let list = Value::from(
            users
                .iter()
                .map(|&(email, role)| Value::from_iter([("email", email), ("role", role)]))
                .collect::<Vec<_>>(),
        );
        let object = Value::from_iter([("users", list)]);
        let users_field = Field::root(Some(&object)).field("users").unwrap();
        let mut users = read(&users_field).unwrap();
        let mut review = Review::new();
        check_duplicates(chart, &mut users, &mut review);
        let mut lines: Vec<String> = review
            .verdict(Refusal::Invalid)
            .message()
            .map(|message| message.lines().map(str::to_owned).collect())
            .unwrap_or_default();
        lines.retain(|line| !line.is_empty());
        lines
    }

    #[test]
    fn each_entry_names_the_first_earlier_entry_still_accepted() {
        let lines = duplicates(
            Chart::Monitoring,
            &[
                ("a@x.io", "Admin"),
                ("A@x.io", "Viewer"),
                ("A@x.io", "Viewer"),
                ("a@x.io", "Admin"),
                ("b@x.io", "Viewer"),
                ("B@x.io", "Viewer"),
            ],
        );
        assert_eq!(lines.len(), 3, "{lines:#?}");
        // Entry 1 is refused, so entry 2 is compared with entry 0 only.
        assert!(
            lines[0].contains(r#"users[1].email: "A@x.io" and users[0] ("a@x.io") differ only in letter case but ask for roles "Viewer" and "Admin""#),
            "{lines:#?}"
        );
        assert!(
            lines[1].contains(r#"users[2].email: "A@x.io" and users[0] ("a@x.io") differ only"#),
            "{lines:#?}"
        );
        assert!(
            lines[2].contains(r#"users[3].email: "a@x.io" is already users[0]: the users Job"#),
            "{lines:#?}"
        );
    }

    #[test]
    fn kubernetes_compares_exact_emails_only() {
        let lines = duplicates(
            Chart::Kubernetes,
            &[
                ("a@x.io", "admin"),
                ("A@x.io", "view"),
                ("a@x.io", "view"),
                ("a@x.io", "view"),
            ],
        );
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].contains(r#"users[2].email: "a@x.io" is already users[0] with role "admin""#),
            "{lines:#?}"
        );
        assert!(
            lines[1].contains(r#"users[3].email: "a@x.io" is already users[0] with role "admin""#),
            "{lines:#?}"
        );
    }

    #[test]
    fn a_role_change_names_the_first_other_known_role() {
        let object = Value::from_iter([(
            "users",
            Value::from(vec![Value::from_iter([
                ("email", "a@x.io"),
                ("role", "view"),
            ])]),
        )]);
        let users_field = Field::root(Some(&object)).field("users").unwrap();
        let users = read(&users_field).unwrap();
        let before = [("a@x.io", "view"), ("a@x.io", "edit"), ("a@x.io", "admin")];
        let mut review = Review::new();
        check_role_changes(&users, &before, &mut review);
        let message = review.verdict(Refusal::Invalid).message().unwrap();
        assert!(
            message.contains(r#"changes the role of "a@x.io" from "admin" to "view""#),
            "{message}"
        );
    }
}
