//! `values-schema`: the `spec` of every Cozystack application checked
//! against its chart's `values.schema.json` at admission, as Helm would
//! check it at render time.
//!
//! An application's `spec` is its HelmRelease's values, verbatim.
//! cozystack-api applies none of the chart's schema on write, so a wrong
//! type, an unknown enum value or a malformed quantity is accepted by
//! `kubectl` and only fails later, when helm-controller renders the chart,
//! leaving a failed HelmRelease. This policy validates on CREATE and UPDATE
//! what Helm validates: the chart's defaults coalesced under the user's
//! values ([`helm`]), nulls deleting keys, with the JSON Schema draft Helm
//! applies to a schema without `$schema` (2020-12, [`schemas::DRAFT`]),
//! interpreted by [`validate`] for exactly the keywords the charts use.
//! Each violation is one finding at its field path in a user's words
//! ([`messages`]). Keys the chart does not declare, which Helm silently
//! ignores, are warned about with the closest declared key
//! ([`undeclared`]). On UPDATE, a violation the stored object already has,
//! unchanged, is a warning: the request does not make things worse.
//!
//! Which schema: the chart's of the release the setting `cozystackVersion`
//! names, built into the module for every release the bundle knows
//! ([`schemas`]); with `cozystackVersion: cluster`, the one the cluster's
//! ApplicationDefinition carries for the kind ([`cluster`]), so a release
//! the bundle was not built with, or an application an operator defined,
//! is judged by the schema the platform applies; when that read fails, the
//! built-in schema of the cluster's release, saying so.
//!
//! Findings under `spec.oidc` belong to oidc-config, and on UPDATE the
//! findings about an immutable storage class whose value changes belong to
//! storageclass-immutable: each failure is reported by one policy.

pub mod bounds;
pub mod cluster;
pub mod helm;
pub mod messages;
pub mod rules;
pub mod schemas;
mod settings;
pub mod undeclared;
pub mod validate;

use serde_json::Value;
use shared::field::Segment;
use shared::{
    Field, FieldError, FieldPath, Finding, Findings, Kind, Operation, Refusal, Request, Review,
    Selection, Verdict,
};

use messages::Violation;
use release::Resolved;
pub use rules::RULES;
use schemas::App;
pub use settings::{IGNORABLE, Settings};
use tree::build::Arena;

/// What the rule reads of each object: the whole `spec`, of both objects.
pub const READS: Selection = Selection::Paths(&["spec"]);

shared::policy!(Settings, evaluate, READS);

/// Whether `path` is `spec.oidc` or below it (oidc-config's).
fn under_oidc(path: &FieldPath) -> bool {
    let segments = path.segments();
    matches!(
        segments.as_slice(),
        [Segment::Key(spec), Segment::Key(oidc), ..] if spec == "spec" && oidc == "oidc"
    )
}

/// Whether the undeclared key at `path` (value `value`) is, or holds, a
/// Harbor key that tries to keep data (`spec.persistence`, any
/// `persistence` under `spec.harbor`, any `resourcePolicy` or
/// `helm.sh/resource-policy`): harbor-retention denies those, saying what
/// a delete then loses, so warning about the key here would be a second
/// finding of the same cause.
fn harbor_retention_key(app: &App<'_>, path: &FieldPath, value: Option<&Value>) -> bool {
    /// `keys` from the object root: `["spec", "persistence"]`.
    fn retention(key: &str, keys: &[&str]) -> bool {
        key.eq_ignore_ascii_case("resourcePolicy")
            || key.eq_ignore_ascii_case("helm.sh/resource-policy")
            || (key.eq_ignore_ascii_case("persistence")
                && (keys.len() == 2 || keys.get(1) == Some(&"harbor")))
    }
    fn holds(keys: &mut Vec<String>, value: &Value) -> bool {
        let Some(members) = value.as_object() else {
            return false;
        };
        members.iter().any(|(key, inner)| {
            keys.push(key.clone());
            let path: Vec<&str> = keys.iter().map(String::as_str).collect();
            let found = retention(key, &path) || holds(keys, inner);
            keys.pop();
            found
        })
    }
    if app.kind != "Harbor" {
        return false;
    }
    let mut keys: Vec<String> = Vec::new();
    for segment in path.segments() {
        let Segment::Key(key) = segment else {
            return false;
        };
        keys.push(key.clone());
    }
    let path: Vec<&str> = keys.iter().map(String::as_str).collect();
    path.last().is_some_and(|key| retention(key, &path))
        || value.is_some_and(|v| holds(&mut keys, v))
}

/// Whether `check` is the schema's refusal of a Kubernetes version below
/// v1.31 (`v1.30` and older): chart-render reports those, with what
/// migration 46 and a GitOps source that re-applies the version mean.
fn removed_kubernetes_version(app: &App<'_>, raw: Option<&Value>, check: &Finding) -> bool {
    matches!(app.kind, "Kubernetes" | "KubernetesNodes")
        && check.rule == rules::SCHEMA_VIOLATION
        && check.path == FieldPath::parse("spec.version")
        && raw_at(raw, &check.path)
            .and_then(Value::as_str)
            .and_then(|v| v.strip_prefix("v1."))
            .filter(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|minor| minor.parse::<u32>().ok())
            .is_some_and(|minor| minor < 31)
}

/// The value at `path` below the object root, in an object whose `spec`
/// is `spec`: `None` when absent, and a null when a parent is null.
fn raw_at<'v>(spec: Option<&'v Value>, path: &FieldPath) -> Option<&'v Value> {
    const NULL: &Value = &Value::Null;
    let segments = path.segments();
    let mut value = spec?;
    for segment in segments.iter().skip(1) {
        if value.is_null() {
            return Some(NULL);
        }
        value = match segment {
            Segment::Key(key) => value.as_object()?.get(key)?,
            Segment::Index(i) => value.as_array()?.get(*i)?,
        };
    }
    Some(value)
}

/// Whether `spec` sets the defaulted key at `path` to `null` below tables
/// only: then Helm deletes it with its default ([`helm::coalesce`]).
fn null_deletes(spec: Option<&Value>, path: &[&str]) -> bool {
    let mut value = spec;
    for key in path {
        value = value
            .and_then(Value::as_object)
            .and_then(|map| map.get(*key));
    }
    value.is_some_and(Value::is_null)
}

/// Whose schema judges a spec, as messages name it.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// The chart of a release the bundle knows (`v1.6.2`).
    Chart(&'static str),
    /// The schema of the cluster's ApplicationDefinition of this name.
    Definition(&'a str),
}

/// What judges a spec: the kind's schema and defaults, where they come
/// from, and whether the templates of the release judged by are known (the
/// counts they cannot render, [`bounds`]).
struct Judge<'a> {
    app: &'a App<'a>,
    source: Source<'a>,
    templates: bool,
}

/// Everything wrong with one object's `spec` (absent: no user values).
fn check(spec: Option<&Value>, judge: &Judge<'_>, settings: &Settings) -> Findings {
    let app = judge.app;
    let base = FieldPath::parse("spec");
    let effective = helm::effective(spec.and_then(Value::as_object), app.defaults);
    let mut found = Vec::new();
    let failures = validate::validate(app.schema, &effective);
    if !failures.is_empty() {
        for Violation { path, mut message } in
            messages::violations(&failures, &effective, &base, app.kind)
        {
            if raw_at(spec, &path).is_some_and(Value::is_null) {
                message.push_str(
                    "; the request sets it to null, and Helm deletes a null key together with the chart default",
                );
            }
            found.push(Finding::new(rules::SCHEMA_VIOLATION, path, message));
        }
    }
    for null in app.nulls {
        let path = null
            .path
            .iter()
            .fold(base.clone(), |path, key| path.key(key));
        let reported = found.iter().any(|c: &Finding| c.path == path);
        if !reported && null_deletes(spec, null.path) {
            found.push(Finding::new(
                rules::NULL_FAILS_RENDER,
                path,
                messages::null_fails_render(app, null),
            ));
        }
    }
    let bounds = bounds::BOUNDS
        .iter()
        .filter(|b| judge.templates && b.kind == app.kind);
    for bound in bounds {
        let path = bound
            .path
            .iter()
            .fold(base.clone(), |path, key| path.key(key));
        let count =
            raw_at(spec, &path).filter(|n| n.as_f64().is_some_and(|n| n > f64::from(bounds::MAX)));
        if let Some(count) = count
            && !found.iter().any(|c: &Finding| c.path == path)
        {
            found.push(Finding::new(
                rules::RENDER_BOUND,
                path,
                messages::render_bound(app, bound, count),
            ));
        }
    }
    for addon in app.addons {
        let block = addon
            .values
            .iter()
            .fold(base.clone(), |path, key| path.key(key));
        for closed in addon.closed {
            let at = closed
                .path
                .iter()
                .fold(block.clone(), |path, key| path.key(key));
            let Some(members) = raw_at(spec, &at).and_then(Value::as_object) else {
                continue;
            };
            for key in members.keys() {
                if closed.keys.binary_search(&key.as_str()).is_err() {
                    let suggestion = undeclared::closest(key, closed.keys.iter().copied());
                    found.push(Finding::new(
                        rules::ADDON_SCHEMA,
                        at.key(key),
                        messages::addon_schema(addon, suggestion.map(|s| at.key(s))),
                    ));
                }
            }
        }
    }
    if !settings.ignore.contains(&rules::UNDECLARED_KEY)
        && let Some(raw) = spec
    {
        for key in undeclared::undeclared(raw, app.schema, &base) {
            let mut message = match judge.source {
                Source::Chart(version) => format!(
                    "not declared by the {} chart (Cozystack {version}), so Helm ignores it",
                    app.kind
                ),
                Source::Definition(name) => format!(
                    "not declared by the schema of the cluster's ApplicationDefinition {name}, so the {} chart \
                     most likely ignores it",
                    app.kind
                ),
            };
            if let Some(best) = key.suggestion {
                message.push_str(&format!("; did you mean {best}?"));
            }
            found.push(Finding::new(rules::UNDECLARED_KEY, key.path, message));
        }
    }
    // Findings another policy reports, with more to say about their cause.
    let others = |c: &Finding| {
        under_oidc(&c.path)
            || removed_kubernetes_version(app, spec, c)
            || (c.rule == rules::UNDECLARED_KEY
                && harbor_retention_key(app, &c.path, raw_at(spec, &c.path)))
    };
    found.retain(|c| !others(c));
    found.sort_by_cached_key(|c| (c.path.to_string(), c.message.clone()));
    found.dedup();
    found.into_iter().collect()
}

/// Whether `path` and `field` are the same field, or one is inside the
/// other below `spec`.
fn related(path: &FieldPath, field: &FieldPath) -> bool {
    let (a, b) = (path.segments(), field.segments());
    let shorter = a.len().min(b.len());
    shorter >= 2 && a.get(..shorter) == b.get(..shorter)
}

/// `spec`, a map, or the error naming it; absent or null is no values.
fn spec_of<'f>(object: &Field<'f>) -> Result<Option<&'f Value>, FieldError> {
    let spec = object.field("spec")?;
    spec.expect(Kind::Object)?;
    Ok(spec.json().filter(|value| value.is_object()))
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || request.group != shared::apps::APPS_GROUP
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let object = request.required_object()?;
    let spec = spec_of(&object)?;
    let mut review = Review::new();
    let kind = request.kind.as_ref();
    let resolved = settings.cozystack_version.resolve(request.cluster());
    let unknown = matches!(resolved, Resolved::Unknown { .. });
    let built_in = resolved
        .release()
        .and_then(|release| schemas::release(release.as_str()))
        .and_then(|release| schemas::lookup(release, kind).map(|app| (release.version, app)));
    // The cluster's schema of the kind, or why it does not judge.
    let mut parts = None;
    let mut unused = None;
    if settings.cozystack_version.reads_cluster() {
        match cluster::definition(request.cluster(), kind) {
            Ok(Some(definition)) => match cluster::Parts::of(definition) {
                Ok(read) => parts = Some(read),
                Err(problem) => {
                    unused = Some(format!(
                        "the cluster's ApplicationDefinition of {kind}: {problem}"
                    ))
                }
            },
            Ok(None) => {
                review.warning(
                    rules::SPEC_NOT_CHECKED,
                    FieldPath::root(),
                    format!(
                        "values-schema: spec not checked: no ApplicationDefinition of the cluster serves {kind}, so no schema is known for it"
                    ),
                );
                return Ok(review.verdict(Refusal::Invalid));
            }
            Err(error) => {
                unused = Some(format!(
                    "cannot read the cluster's ApplicationDefinition of {kind}: {error}"
                ));
            }
        }
    }
    let what = if parts.is_some() {
        "the templates"
    } else {
        "the chart schemas"
    };
    if let Some(note) = resolved.note(env!("CARGO_PKG_NAME"), what) {
        review.warning(rules::RELEASE_NOT_CHECKED, FieldPath::root(), note);
    }
    let arena = Arena::new();
    let immutable: Vec<&str> = parts
        .as_ref()
        .map(|p: &cluster::Parts| p.immutable.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let judge = match (&parts, built_in) {
        (Some(parts), _) => {
            let templates = if unknown {
                None
            } else {
                built_in.map(|(_, app)| app)
            };
            let app: &App<'_> = arena.alloc(parts.app(&arena, kind, &immutable, templates));
            Judge {
                app,
                source: Source::Definition(&parts.definition.name),
                templates: !unknown,
            }
        }
        (None, Some((version, app))) => {
            if let Some(unused) = &unused {
                review.warning(
                    rules::CLUSTER_SCHEMA_NOT_CHECKED,
                    FieldPath::root(),
                    format!(
                        "values-schema: judged by the built-in schema of the {kind} chart of Cozystack {version}, not the \
                         cluster's: {unused}"
                    ),
                );
            }
            Judge {
                app,
                source: Source::Chart(version),
                templates: true,
            }
        }
        (None, None) => {
            let why = match (&unused, resolved.release()) {
                (Some(unused), _) => unused.clone(),
                (None, Some(release)) => format!(
                    "{kind} is not an application kind of Cozystack {release} (setting cozystackVersion), so no chart schema is known for it"
                ),
                (None, None) => {
                    "the cluster runs a release whose chart schemas this bundle does not know"
                        .to_owned()
                }
            };
            review.warning(
                rules::SPEC_NOT_CHECKED,
                FieldPath::root(),
                format!("values-schema: spec not checked: {why}"),
            );
            return Ok(review.verdict(Refusal::Invalid));
        }
    };
    let app = judge.app;
    let mut found = check(spec, &judge, settings);
    let mut stored = None;
    if request.operation == Operation::Update {
        let old_object = request.old_object();
        // A stored spec that is not an object has nothing to compare with.
        let old_spec = spec_of(&old_object).ok().flatten();
        if old_object.is_present() {
            stored = Some(check(old_spec, &judge, settings));
        }
        // A changed immutable storage class is storageclass-immutable's to
        // report (including a null, a wrong type, or a `required` it breaks).
        for field in app.immutable {
            let field = FieldPath::parse(field);
            if raw_at(spec, &field) != raw_at(old_spec, &field) {
                found.retain(|c| !related(&c.path, &field));
            }
        }
    }
    found.record(
        stored.as_ref(),
        &settings.deny,
        &settings.ignore,
        &mut review,
    );
    Ok(review.verdict(Refusal::Invalid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn harbor_retention_keys_and_their_holders_are_harbor_retentions() {
        let release = schemas::release("v1.6.2").unwrap();
        let harbor = schemas::lookup(release, "Harbor").unwrap();
        let postgres = schemas::lookup(release, "Postgres").unwrap();
        let owned = |app, path: &str, value: Value| {
            harbor_retention_key(app, &FieldPath::parse(path), Some(&value))
        };
        assert!(owned(harbor, "spec.persistence", json!({})));
        assert!(owned(harbor, "spec.trivy.resourcePolicy", json!("keep")));
        assert!(owned(
            harbor,
            "spec.harbor",
            json!({"jobservice": {"persistence": {}}})
        ));
        assert!(!owned(harbor, "spec.harbor", json!({"foo": 1})));
        assert!(!owned(harbor, "spec.database.persistence", json!({})));
        assert!(!owned(postgres, "spec.persistence", json!({})));
    }

    /// A cluster that records `release` and serves the kind `Widget` from
    /// an ApplicationDefinition with `schema`.
    struct Widgets {
        release: &'static str,
        schema: &'static str,
    }

    impl shared::Cluster for Widgets {
        fn call(
            &self,
            operation: &str,
            request: &[u8],
        ) -> Result<Vec<u8>, shared::lookup::LookupError> {
            let request: Value = serde_json::from_slice(request).unwrap();
            let answer = match (operation, request["kind"].as_str()) {
                (shared::lookup::GET, Some("Deployment")) => {
                    json!({"spec": {"template": {"spec": {"containers": [{"name": "cozystack-operator",
                        "image": format!("x/cozystack-operator:{}", self.release)}]}}}})
                }
                (shared::lookup::GET, _) => {
                    json!({"spec": {"application": {"openAPISchema": self.schema}}})
                }
                _ => json!({"items": [{"metadata": {"name": "widget"},
                    "spec": {"application": {"kind": "Widget", "plural": "widgets"}}}]}),
            };
            Ok(answer.to_string().into_bytes())
        }
    }

    fn judge(cluster: &Widgets, kind: &str, spec: Value) -> Verdict {
        let payload = json!({"request": {"uid": "u",
            "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": kind},
            "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "widgets"},
            "name": "w", "namespace": "tenant-foo", "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": {"metadata": {"name": "w"}, "spec": spec}}});
        let text = payload.to_string();
        let read = shared::request::read(text.as_bytes(), READS, cluster).unwrap();
        let settings = Settings {
            cozystack_version: release::CozystackVersion::named("cluster"),
            ..Settings::default()
        };
        evaluate(&read.request, &settings).unwrap()
    }

    #[test]
    fn a_custom_application_is_judged_by_its_definition() {
        let cluster = Widgets {
            release: "v1.6.2",
            schema: r#"{"type": "object", "properties": {"size": {"type": "string", "enum": ["small", "large"], "default": "small"}}}"#,
        };
        let denied = judge(&cluster, "Widget", json!({"size": "huge"}));
        assert!(!denied.is_allowed());
        let message = denied.message().unwrap();
        assert!(
            message.contains("spec.size: must be one of \"small\", \"large\"; got \"huge\""),
            "{message}"
        );
        assert!(judge(&cluster, "Widget", json!({"size": "large"})).is_allowed());
    }

    #[test]
    fn a_definition_the_validator_cannot_apply_is_not_used() {
        let cluster = Widgets {
            release: "v1.6.2",
            schema: r#"{"type": "object", "properties": {"size": {"type": "string", "minLength": 1}}}"#,
        };
        let verdict = judge(&cluster, "Widget", json!({"size": ""}));
        assert!(verdict.is_allowed());
        assert_eq!(
            verdict.warnings(),
            [
                "[values-schema/spec-not-checked] values-schema: spec not checked: the cluster's ApplicationDefinition of \
              Widget: its schema has keyword minLength at /properties/size/minLength, which this policy does not implement"
            ]
        );
    }
}
