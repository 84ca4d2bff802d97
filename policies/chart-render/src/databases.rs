//! Databases and their users, as the database charts' templates read them
//! (v1.6.2): a database entry without `roles` makes the template
//! dereference nil (`$db.roles.admin`), and MongoDB refuses a user that no
//! database grants a role.

use shared::{Field, FieldError};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::truthy;

/// The rules of `kind`.
pub fn check(kind: &str, spec: &Field<'_>, out: &mut Findings) {
    skip_wrong_types(roles(kind, spec, out));
    if kind == "MongoDB" {
        skip_wrong_types(mongodb_users(spec, out));
    }
}

/// Where each chart reads `databases.<d>.roles`, and when.
fn template(kind: &str, spec: &Field<'_>) -> Result<Option<&'static str>, FieldError> {
    let users = truthy(spec.field("users")?.json());
    Ok(match kind {
        // Every database renders its Grants.
        "MariaDB" => Some("apps/mariadb/templates/db.yaml"),
        // Only the role assignments read it: one loop per user, in the
        // init script, which a bootstrap (restore) does not render.
        "Postgres" if users && !truthy(spec.at("bootstrap.enabled")?.json()) => {
            Some("apps/postgres/templates/init-script.yaml")
        }
        // The users' role map, built when there are users.
        "MongoDB" if users => Some("apps/mongodb/templates/mongodb.yaml"),
        _ => None,
    })
}

/// `databases.<d>` without `roles` (absent or null).
fn roles(kind: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let Some(file) = template(kind, spec)? else {
        return Ok(());
    };
    for (name, database) in spec.field("databases")?.entries()? {
        // A null entry is dropped when Helm merges the values.
        if !database.is_present() {
            continue;
        }
        let roles = database.field("roles")?;
        if !roles.is_present() {
            out.add(
                crate::rules::DATABASE_ROLES,
                database.path(),
                format!(
                    "database {name:?} has no roles: {file} reads databases.{name}.roles.admin and fails on a missing \
                     roles (nil pointer evaluating interface {{}}.admin; the chart fails to render). Add roles: {{}} \
                     or roles with admin and readonly user lists."
                ),
            );
        }
    }
    Ok(())
}

/// `apps/mongodb/templates/mongodb.yaml` (136): every user needs a role in
/// some database.
fn mongodb_users(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let mut granted: Vec<&str> = Vec::new();
    for (_, database) in spec.field("databases")?.entries()? {
        let roles = database.field("roles")?;
        if database.is_present() && !roles.is_present() {
            // roles() denied it: the template fails before this check.
            return Ok(());
        }
        for role in ["admin", "readonly"] {
            for user in roles.field(role)?.items()? {
                if let Some(user) = user.string()? {
                    granted.push(user);
                }
            }
        }
    }
    for (user, field) in spec.field("users")?.entries()? {
        if !granted.contains(&user) {
            out.add(
                crate::rules::MONGODB_USER_ROLE,
                field.path(),
                format!(
                    "user '{user}' is not assigned to any database role in databases.*.roles (the chart fails to \
                     render). List it under databases.<db>.roles.admin or readonly."
                ),
            );
        }
    }
    Ok(())
}
