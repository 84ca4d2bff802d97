//! Mode `System` against the platform's OIDC flag.
//!
//! Both charts fail the render of mode `System` unless `_cluster.oidc-enabled`
//! is the string `"true"` (Kubernetes: `templates/oidc-keycloak.yaml`;
//! Monitoring: `monitoring.oidc.assertSystemEnabled` in
//! `packages/system/monitoring/templates/_helpers.tpl`, called from
//! `templates/grafana/grafana.yaml`). The platform chart derives that value
//! from `authentication.oidc.enabled` (default `false`,
//! `packages/core/platform/values.yaml`) and writes it twice: into the
//! `cozystack-values` Secret the charts read (`templates/apps.yaml`) and
//! into the cluster-scoped Package `cozystack.tenant-application`,
//! `spec.components.tenant.values._cluster.oidc-enabled`
//! (`templates/bundles/system.yaml`). A policy never reads Secrets, so it
//! reads the Package: the same value, from the same source, rewritten by
//! every platform upgrade, and gone with the platform rather than with OIDC
//! (unlike the Keycloak CRDs or the Keycloak Packages, which survive turning
//! OIDC off).
//!
//! The setting `platformOidcEnabled`, when set, is authoritative and costs
//! no read. A read that gives no answer (no cluster, not granted, Package
//! absent, a value other than `"true"`/`"false"`) is not a verdict about the
//! object: the request is allowed with a warning that says how to decide
//! without the read.

use shared::lookup::{self, Cluster, GetResource, LookupError};
use shared::warnings::MAX_CHARS;
use shared::{Field, FieldPath, Kind, Operation, Request, Review, Value};

use crate::chart::SYSTEM_NEEDS_PLATFORM;

pub const PACKAGE_API_VERSION: &str = "cozystack.io/v1alpha1";
pub const PACKAGE_KIND: &str = "Package";
pub const PACKAGE_NAME: &str = "cozystack.tenant-application";
/// Where the Package carries the flag.
pub const FLAG_PATH: &str = "spec.components.tenant.values._cluster.oidc-enabled";
const MASKS: &[&str] = &[FLAG_PATH];

/// Where an answer "off" came from, for the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Setting,
    Package,
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::Setting => "the policy setting platformOidcEnabled is false",
            Source::Package => {
                "Package cozystack.tenant-application has _cluster.oidc-enabled \"false\""
            }
        }
    }
}

/// The flag as the Package carries it: `Ok(true)` or `Ok(false)`, or why
/// it could not be read.
pub fn read_package(cluster: &dyn Cluster) -> Result<bool, LookupError> {
    let answer = cluster.get(&GetResource {
        api_version: PACKAGE_API_VERSION,
        kind: PACKAGE_KIND,
        name: PACKAGE_NAME,
        namespace: None,
        disable_cache: false,
        field_masks: Some(MASKS),
    })?;
    let package = lookup::object(&answer)?;
    let value = Field::root(Some(&package))
        .at(FLAG_PATH)
        .map_err(|e| LookupError(format!("unreadable answer: {e}")))?
        .json();
    match value {
        Some(Value::String(text)) if text == "true" => Ok(true),
        Some(Value::String(text)) if text == "false" => Ok(false),
        None => Err(LookupError(format!("it has no {FLAG_PATH}"))),
        // Described without serde_json's `Display`, which would link its
        // whole serialiser into the module for this one message.
        Some(Value::String(text)) => Err(neither(&format!("{text:?}"))),
        Some(Value::Bool(flag)) => Err(neither(&flag.to_string())),
        Some(other) => Err(neither(Kind::of(other).described())),
    }
}

/// The answer when the Package's flag is `found` instead of a string.
fn neither(found: &str) -> LookupError {
    LookupError(format!(
        "its {FLAG_PATH} is {found}, neither \"true\" nor \"false\""
    ))
}

/// Mode `System` (in `mode`) against the platform flag: the setting when
/// set, else the Package. A request already rejected costs no read. On
/// UPDATE, a mode that was `System` already is only warned about.
pub fn check(request: &Request<'_>, setting: Option<bool>, mode: &Field<'_>, review: &mut Review) {
    let source = match setting {
        Some(true) => return,
        Some(false) => Source::Setting,
        // Rejected anyway: the answer would not change the verdict.
        None if review.has_violations() => return,
        None => match read_package(request.cluster()) {
            Ok(true) => return,
            Ok(false) => Source::Package,
            Err(error) => {
                review.warning(
                    crate::rules::SYSTEM_NOT_CHECKED,
                    mode.path(),
                    not_checked(&mode.path(), &error),
                );
                return;
            }
        },
    };
    if request.operation == Operation::Update && stored_system(request) {
        review.warning(
            crate::rules::SYSTEM_WITHOUT_PLATFORM_OIDC,
            mode.path(),
            unchanged(source),
        );
    } else {
        review.violation(
            crate::rules::SYSTEM_WITHOUT_PLATFORM_OIDC,
            mode.path(),
            format!(
                "{SYSTEM_NEEDS_PLATFORM} (This cluster runs without it: {}.)",
                source.describe()
            ),
        );
    }
}

/// The warning for a `System` that was stored already.
fn unchanged(source: Source) -> String {
    format!(
        "System (unchanged) fails to render: this cluster runs without platform OIDC ({}). \
         Enable authentication.oidc.enabled in cozystack-values, or set mode CustomConfig or None.",
        source.describe()
    )
}

/// Whether the stored object (UPDATE) already asks for mode `System`.
fn stored_system(request: &Request<'_>) -> bool {
    request
        .old_object()
        .at("spec.oidc.mode")
        .and_then(|mode| mode.string())
        .is_ok_and(|mode| mode == Some("System"))
}

/// The warning for a flag that could not be read: what was not checked,
/// how to decide without the read, then the host's reason, cut so that the
/// warning keeps its first part within what the API server passes on.
fn not_checked(path: &FieldPath, error: &LookupError) -> String {
    let head = "System not checked: it needs platform OIDC; \
                set platformOidcEnabled in the settings. Package cozystack.tenant-application: ";
    // `[<tag>] <path>: <head><reason>` within MAX_CHARS (ASCII, so bytes
    // are characters once the reason is made one line).
    let reason = shared::warnings::one_line(&error.0);
    let tag = crate::rules::SYSTEM_NOT_CHECKED.tag().len() + 3;
    let room = MAX_CHARS.saturating_sub(tag + path.to_string().len() + 2 + head.len());
    let reason = if reason.len() > room {
        let mut cut = reason
            .get(..room.saturating_sub(3))
            .unwrap_or_default()
            .to_owned();
        cut.push_str("...");
        cut
    } else {
        reason
    };
    format!("{head}{reason}")
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Answers every `get` with its result.
    struct Answer(Result<String, String>);

    impl Cluster for Answer {
        fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
            assert_eq!(operation, lookup::GET);
            let request: Value = serde_json::from_slice(request).unwrap();
            assert_eq!(
                (
                    request["api_version"].as_str(),
                    request["kind"].as_str(),
                    request["name"].as_str(),
                    request["namespace"].as_str()
                ),
                (
                    Some(PACKAGE_API_VERSION),
                    Some(PACKAGE_KIND),
                    Some(PACKAGE_NAME),
                    None
                )
            );
            self.0.clone().map(String::into_bytes).map_err(LookupError)
        }
    }

    #[test]
    fn reads_only_the_two_strings_the_platform_writes() {
        let flag = |v| {
            format!(
                r#"{{"spec":{{"components":{{"tenant":{{"values":{{"_cluster":{{"oidc-enabled":{v}}}}}}}}}}}}}"#
            )
        };
        let read = |text: String| read_package(&Answer(Ok(text)));
        assert_eq!(read(flag("\"true\"")), Ok(true));
        assert_eq!(read(flag("\"false\"")), Ok(false));
        for (other, shown) in [
            ("true", "true"),
            ("\"yes\"", "\"yes\""),
            ("\"\"", "\"\""),
            ("1", "a number"),
            ("[\"true\"]", "a list"),
        ] {
            let error = read(flag(other)).unwrap_err().0;
            assert_eq!(
                error,
                format!("its {FLAG_PATH} is {shown}, neither \"true\" nor \"false\""),
                "{other}"
            );
        }
        assert!(
            read(flag("null"))
                .unwrap_err()
                .0
                .starts_with("it has no spec.components")
        );
        assert!(read("{}".into()).unwrap_err().0.starts_with("it has no"));
        assert!(
            read(r#"{"spec":{"components":[]}}"#.into())
                .unwrap_err()
                .0
                .starts_with("unreadable answer")
        );
        assert!(
            read("not json".into())
                .unwrap_err()
                .0
                .starts_with("unreadable answer")
        );
        assert_eq!(
            read_package(&Answer(Err("not found".into())))
                .unwrap_err()
                .0,
            "not found"
        );
    }

    #[test]
    fn warnings_fit_the_api_server_limit() {
        let path = FieldPath::parse("spec.oidc.mode");
        let long = LookupError("x".repeat(400));
        let finding = shared::Finding::new(
            crate::rules::SYSTEM_NOT_CHECKED,
            path.clone(),
            not_checked(&path, &long),
        );
        let text = finding.to_string();
        assert_eq!(text.len(), MAX_CHARS, "{text}");
        assert!(text.starts_with("[oidc-config/system-not-checked] spec.oidc.mode: "));
        assert!(text.ends_with("xxx..."), "{text}");
        assert!(text.contains("set platformOidcEnabled in the settings"));
        let short = not_checked(&path, &LookupError("not found".into()));
        assert!(short.ends_with("Package cozystack.tenant-application: not found"));
        for source in [Source::Setting, Source::Package] {
            let text = format!("{path}: {}", unchanged(source));
            assert!(text.len() <= MAX_CHARS, "{} {text}", text.len());
        }
    }
}
