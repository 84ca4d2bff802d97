//! The Cozystack releases whose charts the bundle knows, the setting that
//! names one ([`CozystackVersion`]), and the release a cluster runs.
//!
//! Each release is one entry of [`table`], which `cargo xtask
//! import-release` writes from `releases/<version>.json` (docs/releases.md):
//! its version, whether it is a release candidate (kept out of the defaults
//! and the chart's list), and what its charts say that a rule depends on
//! ([`Charts`]). Releases whose charts are identical point at one
//! [`Charts`], so the data is held once (v1.5.0 is v1.5.1's, v1.5.2 is
//! v1.5.3's).
//!
//! The cluster's own release is what the platform records: the
//! `cozystack-operator` Deployment in `cozy-system`, whose version the
//! operator reports as the platform's ([`recorded`]).

// Written by `cargo xtask import-release`, as it writes it.
#[rustfmt::skip]
mod table;

use std::fmt;

use serde::Deserialize;
use serde_json::Value;
use shared::lookup::{Cluster, GetResource, LookupError, object};

/// What a release's charts say that a rule depends on, as the importer
/// read it from them (`xtask/src/commands/import_release/facts.rs` has the
/// probe of each).
#[derive(Debug)]
pub struct Charts {
    /// The keys of `apps/kubernetes/files/versions.yaml`, as
    /// `_versions.tpl` lists them in its message: `[v1.31 v1.32 …]`.
    pub kubernetes: &'static str,
    /// The oldest minor of those keys: `31`.
    pub oldest_kubernetes: u32,
    /// The kinds whose chart fails unless the application is named as the
    /// chart (`check-release-name.yaml`: `The name of the release MUST BE
    /// <chart>`), with that name.
    pub fixed_names: &'static [(&'static str, &'static str)],
    /// The [`Fact`]s that hold, one bit each.
    pub facts: u32,
}

/// A behaviour of a release's charts that some rule follows, present or
/// not. Each is found in the chart files by the importer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// `apps/kubernetes/values.yaml` holds a default node group `md0`
    /// (`roles: [ingress-nginx]`, `instanceType: u1.medium`) that Helm
    /// merges into a user's `nodeGroups` (v1.5).
    Md0Default,
    /// `apps/kubernetes/templates/cluster.yaml` fails on a node group with
    /// an instance type and only one of `resources.cpu` and
    /// `resources.memory`, and skips the instance-type lookup of a group
    /// sized by both (v1.5.2).
    NodeGroupResources,
    /// `cluster.yaml` checks `controlPlane.apiServer.extraVolumes` and
    /// `extraVolumeMounts` (v1.6).
    ApiServerVolumes,
    /// `cluster.yaml` checks the format of `maxUnhealthy` (v1.6).
    MaxUnhealthy,
    /// The Kubernetes chart's schema declares `oidc` (v1.6).
    Oidc,
    /// `apps/kubernetes/templates/_helpers.tpl` defines
    /// `kubernetes.positiveDuration`, which the Kubernetes and
    /// KubernetesNodes charts pass the autoscaler's and the health check's
    /// durations through (v1.7.0-rc.3c780acd).
    PositiveDuration,
    /// `cluster.yaml` checks a node group's `podCpuLimit` and
    /// `podCpuRequest` (v1.7.0-rc.3c780acd).
    PodCpu,
}

impl Fact {
    /// Every fact, in bit order.
    pub const ALL: [Fact; 7] = [
        Fact::Md0Default,
        Fact::NodeGroupResources,
        Fact::ApiServerVolumes,
        Fact::MaxUnhealthy,
        Fact::Oidc,
        Fact::PositiveDuration,
        Fact::PodCpu,
    ];

    /// The fact's bit in [`Charts::facts`].
    pub const fn bit(self) -> u32 {
        match self {
            Fact::Md0Default => 1,
            Fact::NodeGroupResources => 1 << 1,
            Fact::ApiServerVolumes => 1 << 2,
            Fact::MaxUnhealthy => 1 << 3,
            Fact::Oidc => 1 << 4,
            Fact::PositiveDuration => 1 << 5,
            Fact::PodCpu => 1 << 6,
        }
    }

    /// Its name in `releases/<version>.json`.
    pub const fn id(self) -> &'static str {
        match self {
            Fact::Md0Default => "md0-default",
            Fact::NodeGroupResources => "node-group-resources",
            Fact::ApiServerVolumes => "api-server-volumes",
            Fact::MaxUnhealthy => "max-unhealthy",
            Fact::Oidc => "oidc",
            Fact::PositiveDuration => "positive-duration",
            Fact::PodCpu => "pod-cpu",
        }
    }
}

/// One release the bundle knows: a row of [`table::RELEASES`].
#[derive(Debug)]
pub struct Known {
    /// `v1.6.2`.
    pub version: &'static str,
    /// A release candidate: accepted by the setting, never the default,
    /// not in the chart's list of releases.
    pub candidate: bool,
    pub charts: &'static Charts,
}

/// A Cozystack release whose charts the bundle knows.
#[derive(Clone, Copy)]
pub struct Release(&'static Known);

impl PartialEq for Release {
    fn eq(&self, other: &Self) -> bool {
        self.0.version == other.0.version
    }
}

impl Eq for Release {}

impl fmt::Debug for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.version)
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.version)
    }
}

impl Default for Release {
    /// The newest release that is not a candidate: the one a policy judges
    /// by when its settings name none.
    fn default() -> Self {
        table::DEFAULT
    }
}

impl Release {
    /// Every known release, newest first, candidates included.
    pub fn all() -> impl Iterator<Item = Release> {
        table::RELEASES.iter().map(|known| Release(known))
    }

    /// Every release that is not a candidate, newest first: the chart's
    /// list.
    pub fn released() -> impl Iterator<Item = Release> {
        Release::all().filter(|release| !release.is_candidate())
    }

    /// `v1.6.2`.
    pub fn as_str(self) -> &'static str {
        self.0.version
    }

    /// The release `text` names, with or without its `v`.
    pub fn parse(text: &str) -> Option<Release> {
        let text = text.trim_ascii();
        let text = text.strip_prefix('v').unwrap_or(text);
        Release::all().find(|release| release.as_str().get(1..) == Some(text))
    }

    /// Whether it is a release candidate.
    pub fn is_candidate(self) -> bool {
        self.0.candidate
    }

    /// What its charts say.
    pub fn charts(self) -> &'static Charts {
        self.0.charts
    }

    /// Whether `fact` holds for its charts.
    pub fn has(self, fact: Fact) -> bool {
        self.0.charts.facts & fact.bit() != 0
    }

    /// The name the chart of `kind` requires of the application, if any.
    pub fn fixed_name(self, kind: &str) -> Option<&'static str> {
        self.0
            .charts
            .fixed_names
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, name)| *name)
    }

    /// `(major, minor)` of its version: `(1, 6)` for `v1.6.2`.
    pub fn line(self) -> Option<(u32, u32)> {
        line(self.as_str())
    }

    /// Every release the setting accepts, as a message lists them:
    /// `v1.6.2, v1.6.1, …, v1.5.0 (and the release candidate …)`, written
    /// with the table.
    pub fn list() -> &'static str {
        table::LIST
    }
}

/// `(major, minor)` of a version such as `v1.6.2` or `1.7.0-rc.1`.
pub fn line(version: &str) -> Option<(u32, u32)> {
    let version = version.trim();
    let version = version.strip_prefix('v').unwrap_or(version);
    let mut parts = version.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Where the platform records its release: the `cozystack-operator`
/// Deployment of `cozy-system`
/// (`packages/core/installer/templates/cozystack-operator.yaml`, v1.5 and
/// v1.6), whose container's `COZYSTACK_VERSION` (v1.6, the installer's
/// `cozystackOperator.platformVersion`) or else the version built into its
/// image, which its tag names (`cozystack-operator:v1.6.2@sha256:…`, the
/// installer's Makefile builds it with `VERSION=v$(COZYSTACK_VERSION)`), is
/// the release the operator reports (`pkg/version/version.go`). The
/// `cozystack-version` ConfigMap holds the migration number (54 on every
/// v1.6.x), not the release.
pub const OPERATOR_NAMESPACE: &str = "cozy-system";
/// The Deployment's name.
pub const OPERATOR: &str = "cozystack-operator";
/// Its container.
const OPERATOR_CONTAINER: &str = "cozystack-operator";
/// The variable that overrides the version built into the image.
const VERSION_VARIABLE: &str = "COZYSTACK_VERSION";
/// What the read keeps of the Deployment.
const OPERATOR_MASKS: &[&str] = &["spec.template.spec.containers"];

/// The read of the operator's Deployment.
pub fn operator_request() -> GetResource<'static> {
    GetResource {
        api_version: "apps/v1",
        kind: "Deployment",
        name: OPERATOR,
        namespace: Some(OPERATOR_NAMESPACE),
        disable_cache: false,
        field_masks: Some(OPERATOR_MASKS),
    }
}

/// The release the operator's Deployment records: its container's
/// `COZYSTACK_VERSION` when set and not empty, else its image's tag. A
/// member of the wrong type counts as absent: the answer is the API
/// server's, and the error says what was missing.
pub fn recorded_in(deployment: &Value) -> Result<&str, &'static str> {
    fn text<'v>(object: &'v Value, key: &str) -> Option<&'v str> {
        object.get(key).and_then(Value::as_str)
    }
    let containers = ["spec", "template", "spec", "containers"]
        .into_iter()
        .try_fold(deployment, |value, key| value.get(key))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let container = containers
        .iter()
        .find(|c| text(c, "name") == Some(OPERATOR_CONTAINER))
        .ok_or("it has no container cozystack-operator")?;
    let env = container
        .get("env")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let variable = env
        .iter()
        .filter(|v| text(v, "name") == Some(VERSION_VARIABLE))
        .find_map(|v| text(v, "value"))
        .map(str::trim_ascii)
        .filter(|value| !value.is_empty());
    match variable {
        Some(version) => Ok(version),
        None => text(container, "image")
            .and_then(image_tag)
            .ok_or("its image names no version (no tag, and no COZYSTACK_VERSION)"),
    }
}

/// The tag of an image reference (`registry:5000/repo/name:tag@sha256:…`).
fn image_tag(image: &str) -> Option<&str> {
    let bytes = image.as_bytes();
    let end = bytes.iter().position(|b| *b == b'@').unwrap_or(bytes.len());
    let start = bytes
        .get(..end)?
        .iter()
        .rposition(|b| *b == b'/')
        .map_or(0, |slash| slash + 1);
    let name = image.get(start..end)?;
    let colon = name.as_bytes().iter().position(|b| *b == b':')?;
    name.get(colon + 1..).filter(|tag| !tag.is_empty())
}

/// The release the cluster records ([`recorded_in`]), read through
/// `cluster`.
pub fn recorded(cluster: &dyn Cluster) -> Result<String, LookupError> {
    let answer = cluster.get(&operator_request())?;
    match recorded_in(&object(&answer)?) {
        Ok(version) => Ok(version.to_owned()),
        Err(problem) => Err(LookupError(
            [
                "Deployment cozy-system/cozystack-operator does not say the release: ",
                problem,
            ]
            .concat(),
        )),
    }
}

/// The release a cluster runs, as the platform records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The version it records (`v1.6.2`).
    pub recorded: String,
    /// That release, when the bundle knows it.
    pub known: Option<Release>,
}

impl Found {
    /// The release `cluster` records, and whether the bundle knows it: what
    /// the preflight and the wiring report print.
    pub fn read(cluster: &dyn Cluster) -> Result<Found, LookupError> {
        let recorded = recorded(cluster)?;
        Ok(Found {
            known: Release::parse(&recorded),
            recorded,
        })
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.known {
            Some(release) if release.is_candidate() => write!(
                f,
                "Cozystack {} (recorded by Deployment {OPERATOR_NAMESPACE}/{OPERATOR}): a release candidate the bundle knows",
                self.recorded
            ),
            Some(_) => write!(
                f,
                "Cozystack {} (recorded by Deployment {OPERATOR_NAMESPACE}/{OPERATOR}): a release the bundle knows",
                self.recorded
            ),
            None => write!(
                f,
                "Cozystack {} (recorded by Deployment {OPERATOR_NAMESPACE}/{OPERATOR}): a release the bundle does not know \
                 (it knows {}); rules bound to a release's charts do not check it",
                self.recorded,
                Release::list()
            ),
        }
    }
}

/// The release a policy judges by, from its setting `cozystackVersion`
/// ([`CozystackVersion::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A release the bundle knows: set, the default, or the cluster's.
    Known(Release),
    /// The setting asks for the cluster's release and it could not be read:
    /// the rules judge by the default release, and say so.
    Unread { fallback: Release, reason: String },
    /// The cluster runs a release the bundle does not know: rules bound to
    /// a release's charts do not check, and say so.
    Unknown { version: String },
}

impl Resolved {
    /// The release to judge by: the known one, or the fallback of an unread
    /// one; `None` when the cluster runs a release the bundle does not know.
    pub fn release(&self) -> Option<Release> {
        match self {
            Resolved::Known(release) => Some(*release),
            Resolved::Unread { fallback, .. } => Some(*fallback),
            Resolved::Unknown { .. } => None,
        }
    }

    /// What a policy says about how it chose the release, when it is not
    /// simply a known one: `policy` names it, `what` says what it judges
    /// (`the templates`, `the chart schemas`).
    pub fn note(&self, policy: &str, what: &str) -> Option<String> {
        match self {
            Resolved::Known(_) => None,
            Resolved::Unread { fallback, reason } => Some(format!(
                "{policy}: the cluster's Cozystack release was not read ({reason}), so {what} of {}, \
                 the default, judged it",
                fallback.as_str()
            )),
            Resolved::Unknown { version } => Some(format!(
                "{policy}: not checked: the cluster runs Cozystack {version}, a release this bundle does not know \
                 (it knows {}), so {what} of that release were not checked; update the bundle",
                Release::list()
            )),
        }
    }
}

/// The setting `cozystackVersion`: the Cozystack release whose charts a
/// policy judges by. A release the bundle knows (`v1.6.2`, with or without
/// the `v`; [`Release::list`]), [`FROM_CLUSTER`] for the release the
/// cluster records ([`recorded`]), or unset for the newest
/// release the bundle knows. Kept as written, so that
/// [`CozystackVersion::validate`] can quote a wrong one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct CozystackVersion(Option<String>);

/// The value of `cozystackVersion` that reads the cluster's release (and,
/// for values-schema, the schemas of its ApplicationDefinitions).
pub const FROM_CLUSTER: &str = "cluster";

impl CozystackVersion {
    /// The setting as written, for a policy's own settings in a test.
    pub fn named(text: &str) -> Self {
        Self(Some(text.to_owned()))
    }

    /// Whether the setting asks for the cluster's release.
    pub fn reads_cluster(&self) -> bool {
        self.0.as_deref().map(str::trim_ascii) == Some(FROM_CLUSTER)
    }

    /// The release the setting names, the default when unset; `None` for
    /// [`FROM_CLUSTER`] and for a value [`CozystackVersion::validate`]
    /// refuses.
    pub fn release(&self) -> Option<Release> {
        match &self.0 {
            None => Some(Release::default()),
            Some(text) => Release::parse(text),
        }
    }

    /// The release to judge by: the one the setting names, or the one the
    /// cluster records, read through `cluster` ([`Resolved`]).
    pub fn resolve(&self, cluster: &dyn Cluster) -> Resolved {
        if !self.reads_cluster() {
            return match self.release() {
                Some(release) => Resolved::Known(release),
                None => Resolved::Unknown {
                    version: self.0.clone().unwrap_or_default(),
                },
            };
        }
        match recorded(cluster) {
            Ok(version) => match Release::parse(&version) {
                Some(release) => Resolved::Known(release),
                None => Resolved::Unknown { version },
            },
            Err(error) => Resolved::Unread {
                fallback: Release::default(),
                reason: error.0,
            },
        }
    }

    /// Refuses a value that names no known release, naming the choices and
    /// where the platform says its own.
    pub fn validate(&self) -> Result<(), String> {
        if self.reads_cluster() || self.release().is_some() {
            return Ok(());
        }
        Err(format!(
            "cozystackVersion {:?} is not a release this policy knows: set {}, or \"cluster\" to judge by the \
             release the cluster runs (recorded by Deployment cozy-system/cozystack-operator)",
            self.0.as_deref().unwrap_or_default(),
            Release::list(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cozystack_version_names_a_known_release() {
        let version = |json: &str| serde_json::from_str::<CozystackVersion>(json).unwrap();
        let named = |v: &str| Release::parse(v).unwrap();
        assert_eq!(version("null").release(), Some(named("v1.6.2")));
        for release in Release::all() {
            let written = version(&format!("{:?}", release.as_str()));
            assert_eq!(written.release(), Some(release));
            assert_eq!(written.validate(), Ok(()));
        }
        assert_eq!(version(r#""v1.5.4""#).release(), Some(named("v1.5.4")));
        assert_eq!(version(r#"" 1.6.2 ""#).release(), Some(named("v1.6.2")));
        let wrong = version(r#""v1.6""#);
        assert_eq!(wrong.release(), None);
        assert_eq!(
            wrong.validate().unwrap_err(),
            format!(
                "cozystackVersion \"v1.6\" is not a release this policy knows: set {}, or \"cluster\" to judge \
                 by the release the cluster runs (recorded by Deployment cozy-system/cozystack-operator)",
                Release::list()
            )
        );
        assert!(
            Release::list().starts_with(
                "v1.6.2, v1.6.1, v1.6.0, v1.5.4, v1.5.3, v1.5.2, v1.5.1, v1.5.0 (and the release candidate v1.7.0-rc."
            ),
            "{}",
            Release::list()
        );
        let cluster = version(r#""cluster""#);
        assert!(cluster.reads_cluster() && cluster.validate().is_ok());
        assert_eq!(cluster.release(), None);
    }

    #[test]
    fn the_cluster_s_release_is_read_or_said_to_be_unread() {
        use shared::lookup::{GET, Offline};
        struct Operator(&'static str);
        impl Cluster for Operator {
            fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
                assert_eq!(operation, GET);
                assert_eq!(
                    serde_json::from_slice::<Value>(request).unwrap(),
                    json!({"api_version": "apps/v1", "kind": "Deployment", "name": "cozystack-operator",
                           "namespace": "cozy-system", "disable_cache": false,
                           "field_masks": ["spec.template.spec.containers"]})
                );
                Ok(format!(
                    r#"{{"spec": {{"template": {{"spec": {{"containers": [{{"name": "cozystack-operator", "image": "ghcr.io/cozystack/cozystack/cozystack-operator:{}@sha256:0"}}]}}}}}}}}"#,
                    self.0
                )
                .into_bytes())
            }
        }
        let cluster = CozystackVersion::named("cluster");
        assert_eq!(
            cluster.resolve(&Operator("v1.5.1")),
            Resolved::Known(Release::parse("v1.5.1").unwrap())
        );
        assert_eq!(
            cluster.resolve(&Operator("v1.8.0")),
            Resolved::Unknown {
                version: "v1.8.0".to_owned()
            }
        );
        assert_eq!(
            cluster.resolve(&Offline),
            Resolved::Unread {
                fallback: Release::default(),
                reason: "no cluster to ask".to_owned()
            }
        );
        // A release the setting names is not read.
        assert_eq!(
            CozystackVersion::named("v1.5.4").resolve(&Offline),
            Resolved::Known(Release::parse("v1.5.4").unwrap())
        );
        assert_eq!(
            CozystackVersion::default().resolve(&Offline),
            Resolved::Known(Release::default())
        );
    }

    #[test]
    fn every_release_parses_with_or_without_its_v() {
        for release in Release::all() {
            assert_eq!(Release::parse(release.as_str()), Some(release));
            assert_eq!(Release::parse(&release.as_str()[1..]), Some(release));
        }
        assert_eq!(Release::parse("v1.6"), None);
        assert_eq!(Release::parse(""), None);
        assert!(!Release::default().is_candidate());
        assert_eq!(Release::default().as_str(), "v1.6.2");
    }

    #[test]
    fn patch_releases_with_the_same_charts_share_them() {
        let charts = |v: &str| std::ptr::from_ref(Release::parse(v).unwrap().charts());
        assert_eq!(charts("v1.5.0"), charts("v1.5.1"));
        assert_eq!(charts("v1.5.2"), charts("v1.5.3"));
        assert_ne!(charts("v1.5.1"), charts("v1.5.3"));
        let v151 = Release::parse("v1.5.1").unwrap();
        let v154 = Release::parse("v1.5.4").unwrap();
        let v162 = Release::parse("v1.6.2").unwrap();
        assert!(!v151.has(Fact::NodeGroupResources));
        assert!(v154.has(Fact::NodeGroupResources) && v154.has(Fact::Md0Default));
        assert!(!v162.has(Fact::Md0Default) && v162.has(Fact::Oidc));
        assert_eq!(v162.fixed_name("Etcd"), Some("etcd"));
        assert_eq!(v162.fixed_name("Postgres"), None);
        assert_eq!(v162.line(), Some((1, 6)));
    }

    #[test]
    fn facts_have_distinct_bits_and_names() {
        for (i, a) in Fact::ALL.iter().enumerate() {
            for b in &Fact::ALL[i + 1..] {
                assert_ne!(a.bit(), b.bit());
                assert_ne!(a.id(), b.id());
            }
        }
    }

    #[test]
    fn lines_of_versions() {
        assert_eq!(line("v1.6.2"), Some((1, 6)));
        assert_eq!(line("1.7.0-rc.3c780acd"), Some((1, 7)));
        assert_eq!(line("v1"), None);
        assert_eq!(line("dev"), None);
    }

    fn operator(env: Value, image: &str) -> Value {
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "image": "x:v0"},
            {"name": "cozystack-operator", "image": image, "env": env}
        ]}}}})
    }

    #[test]
    fn the_operator_records_the_release_as_its_version_package_resolves_it() {
        let image = "ghcr.io/cozystack/cozystack/cozystack-operator:v1.6.2@sha256:41ea5ca9";
        assert_eq!(recorded_in(&operator(json!([]), image)).unwrap(), "v1.6.2");
        assert_eq!(
            recorded_in(&operator(Value::Null, image)).unwrap(),
            "v1.6.2"
        );
        let env = json!([{"name": "KUBERNETES_SERVICE_HOST", "value": "localhost"},
                         {"name": "COZYSTACK_VERSION", "value": "v1.6.1"}]);
        assert_eq!(recorded_in(&operator(env, image)).unwrap(), "v1.6.1");
        let empty = json!([{"name": "COZYSTACK_VERSION", "value": ""}]);
        assert_eq!(recorded_in(&operator(empty, image)).unwrap(), "v1.6.2");
        let mirror = "registry.local:5000/cozystack-operator:v1.5.4";
        assert_eq!(recorded_in(&operator(json!([]), mirror)).unwrap(), "v1.5.4");
        let digest = "registry.local:5000/cozystack-operator@sha256:41ea5ca9";
        assert!(
            recorded_in(&operator(json!([]), digest))
                .unwrap_err()
                .contains("names no version")
        );
        assert!(
            recorded_in(&json!({"spec": {"template": {"spec": {"containers": []}}}}))
                .unwrap_err()
                .contains("no container cozystack-operator")
        );
        assert!(recorded_in(&json!({"spec": {"template": {"spec": {"containers": 7}}}})).is_err());
        for (image, tag) in [
            ("cozystack-operator:v1.6.2", Some("v1.6.2")),
            (
                "r.io:5000/a/cozystack-operator:v1.6.2@sha256:0",
                Some("v1.6.2"),
            ),
            ("r.io:5000/a/cozystack-operator@sha256:0", None),
            ("cozystack-operator:", None),
            ("", None),
        ] {
            assert_eq!(image_tag(image), tag, "{image}");
        }
    }

    #[test]
    fn what_a_policy_says_of_the_release_it_judged_by() {
        let v162 = Release::parse("v1.6.2").unwrap();
        assert_eq!(Resolved::Known(v162).note("p", "the templates"), None);
        let unread = Resolved::Unread {
            fallback: v162,
            reason: "forbidden".to_owned(),
        };
        assert_eq!(unread.release(), Some(v162));
        assert_eq!(
            unread.note("chart-render", "the templates").unwrap(),
            "chart-render: the cluster's Cozystack release was not read (forbidden), so the templates of v1.6.2, \
             the default, judged it"
        );
        let unknown = Resolved::Unknown {
            version: "v1.8.0".to_owned(),
        };
        assert_eq!(unknown.release(), None);
        let note = unknown.note("chart-render", "the templates").unwrap();
        assert!(
            note.starts_with("chart-render: not checked: the cluster runs Cozystack v1.8.0"),
            "{note}"
        );
        assert!(note.contains("v1.6.2, v1.6.1, v1.6.0, v1.5.4"), "{note}");
    }
}
