//! What a release's charts say that a rule depends on, read from its tree.
//!
//! Each [`Fact`] has one probe here ([`probe`]), which names the file it
//! reads; the rules that follow a fact cite the same file.

use std::collections::BTreeMap;

use reading::yaml::{self, Limit};
use release::Fact;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sites::{self, Site};
use crate::tree::Tree;

/// What a release's charts say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Facts {
    /// Every kind its ApplicationDefinitions serve, by kind.
    pub kinds: Vec<Kind>,
    /// The keys of `apps/kubernetes/files/versions.yaml`, sorted.
    pub kubernetes: Vec<String>,
    /// Kind → the name its chart requires of the application.
    pub fixed_names: BTreeMap<String, String>,
    /// The ids of the [`Fact`]s that hold.
    pub facts: Vec<String>,
    /// Every `fail` and `required` call of the application charts.
    pub sites: Vec<Site>,
}

/// One kind, as its ApplicationDefinition serves it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kind {
    /// `spec.application.kind`: `Postgres`.
    pub kind: String,
    /// `spec.application.plural`: `postgreses`.
    pub plural: String,
    /// `spec.release.prefix`: the HelmRelease is `<prefix><name>`.
    pub prefix: String,
    /// The chart whose schema the definition embeds: `apps/postgres`.
    pub chart: String,
}

impl Facts {
    /// Whether `fact` holds.
    pub fn has(&self, fact: Fact) -> bool {
        self.facts.iter().any(|id| id == fact.id())
    }
}

/// Reads the facts of the release at `tree`.
pub fn read(tree: &Tree) -> Result<Facts, String> {
    let kinds = kinds(tree)?;
    let mut sites = Vec::new();
    for chart in tree.app_charts()? {
        sites.extend(sites::of_chart(&chart, &tree.chart(&chart))?);
    }
    let kubernetes = kubernetes_versions(tree)?;
    let fixed_names = fixed_names(tree, &kinds, &sites)?;
    let mut facts = Facts {
        kinds,
        kubernetes,
        fixed_names,
        facts: Vec::new(),
        sites,
    };
    for fact in Fact::ALL {
        if probe(fact, tree, &facts)? {
            facts.facts.push(fact.id().to_owned());
        }
    }
    Ok(facts)
}

/// The Kubernetes chart's main template.
const CLUSTER_TEMPLATE: (&str, &str) = ("apps/kubernetes", "templates/cluster.yaml");

/// Whether `fact` holds for the release at `tree` (`facts` holds its kinds
/// and sites).
pub fn probe(fact: Fact, tree: &Tree, facts: &Facts) -> Result<bool, String> {
    let cluster_fails = |needle: &str| {
        facts.sites.iter().any(|site| {
            (site.chart.as_str(), site.file.as_str()) == CLUSTER_TEMPLATE
                && site.call == "fail"
                && site.message.contains(needle)
        })
    };
    Ok(match fact {
        // `apps/kubernetes/values.yaml`: `nodeGroups` holds a group.
        Fact::Md0Default => {
            let values = tree.chart("apps/kubernetes").join("values.yaml");
            let values: Value = yaml::document(&crate::tree::read(&values)?, Limit::Cases)
                .map_err(|e| format!("{}: {e}", values.display()))?;
            values
                .get("nodeGroups")
                .and_then(Value::as_object)
                .is_some_and(|groups| !groups.is_empty())
        }
        // `cluster.yaml`: `nodeGroup %s: set both resources.cpu and
        // resources.memory, or neither`.
        Fact::NodeGroupResources => {
            cluster_fails("set both resources.cpu and resources.memory, or neither")
        }
        // `cluster.yaml`: `controlPlane.apiServer.extraVolumes…`.
        Fact::ApiServerVolumes => cluster_fails("controlPlane.apiServer.extraVolumes"),
        // `cluster.yaml`: `%s must be a bare integer (e.g. 0, 1) or an
        // integer percentage (e.g. 50%%), got %q` (maxUnhealthy).
        Fact::MaxUnhealthy => {
            cluster_fails("must be a bare integer (e.g. 0, 1) or an integer percentage")
        }
        // `_helpers.tpl`: `%s must be a whole number of s, m or h (e.g.
        // 30m, 1h30m), got %q` (kubernetes.positiveDuration).
        Fact::PositiveDuration => facts.sites.iter().any(|site| {
            site.chart == "apps/kubernetes"
                && site.call == "fail"
                && site.message.contains("must be a whole number of s, m or h")
        }),
        // `cluster.yaml`: `nodeGroup %s: podCpuLimit cannot be combined with
        // instanceType sizing…`.
        Fact::PodCpu => cluster_fails("podCpuLimit cannot be combined with instanceType sizing"),
        // The Kubernetes chart's `values.schema.json` declares `oidc`.
        Fact::Oidc => {
            let schema = tree
                .root
                .join("apps")
                .join("apps-kubernetes")
                .join("values.schema.json");
            let schema: Value = serde_json::from_str(&crate::tree::read(&schema)?)
                .map_err(|e| format!("{}: {e}", schema.display()))?;
            schema.pointer("/properties/oidc").is_some()
        }
    })
}

/// The kinds of the ApplicationDefinitions, each with the chart whose
/// schema its `openAPISchema` is (the definitions embed their chart's
/// schema verbatim, so no name mapping is guessed).
pub fn kinds(tree: &Tree) -> Result<Vec<Kind>, String> {
    let mut schemas = Vec::new();
    for (dir, text) in tree.schemas()? {
        let schema: Value = serde_json::from_str(&text).map_err(|e| format!("apps/{dir}: {e}"))?;
        schemas.push((dir, schema));
    }
    let mut kinds = Vec::new();
    for (file, text) in tree.definitions()? {
        let definition: Value = yaml::document(&text, Limit::Cases)
            .map_err(|e| format!("application-definitions/{file}: {e}"))?;
        let field = |pointer: &str| {
            definition
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("application-definitions/{file}: no {pointer}"))
        };
        let kind = field("/spec/application/kind")?;
        let schema: Value = serde_json::from_str(&field("/spec/application/openAPISchema")?)
            .map_err(|e| format!("application-definitions/{file}: openAPISchema: {e}"))?;
        let matching: Vec<&String> = schemas
            .iter()
            .filter(|(_, s)| *s == schema)
            .map(|(dir, _)| dir)
            .collect();
        let [dir] = matching.as_slice() else {
            return Err(format!(
                "application-definitions/{file}: the schema of {kind} is that of {} charts, expected one",
                matching.len()
            ));
        };
        let chart = dir.replacen('-', "/", 1);
        kinds.push(Kind {
            plural: field("/spec/application/plural")?,
            prefix: definition
                .pointer("/spec/release/prefix")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            chart,
            kind,
        });
    }
    kinds.sort();
    if let Some([first, _]) = kinds
        .windows(2)
        .filter_map(|pair| <&[_; 2]>::try_from(pair).ok())
        .find(|[a, b]| a.kind == b.kind)
    {
        return Err(format!("kind {} is defined twice", first.kind));
    }
    Ok(kinds)
}

/// The keys of `apps/kubernetes/files/versions.yaml`, sorted (as Go's
/// `keys` and `sortAlpha` give them to `_versions.tpl`).
fn kubernetes_versions(tree: &Tree) -> Result<Vec<String>, String> {
    let path = tree.chart("apps/kubernetes").join("files/versions.yaml");
    let versions: BTreeMap<String, Value> =
        yaml::document(&crate::tree::read(&path)?, Limit::Cases)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(versions.into_keys().collect())
}

/// The kinds whose chart refuses a release not named as the chart
/// (`templates/check-release-name.yaml`: `The name of the release MUST BE
/// %s` of `.Chart.Name`); only a kind without a release prefix can meet
/// it, and its application's name is then the release's.
fn fixed_names(
    tree: &Tree,
    kinds: &[Kind],
    sites: &[Site],
) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for kind in kinds.iter().filter(|k| k.prefix.is_empty()) {
        let checks = sites.iter().any(|site| {
            site.chart == kind.chart
                && site.file == "templates/check-release-name.yaml"
                && site.message == "The name of the release MUST BE %s"
        });
        if !checks {
            continue;
        }
        let chart_file = tree.chart(&kind.chart).join("Chart.yaml");
        let chart: Value = yaml::document(&crate::tree::read(&chart_file)?, Limit::Cases)
            .map_err(|e| format!("{}: {e}", chart_file.display()))?;
        let name = chart
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{}: no name", chart_file.display()))?;
        out.insert(kind.kind.clone(), name.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn data(version: &str) -> Option<Tree> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data")
            .join(format!("cozystack-{version}"));
        Tree::at(&dir).ok()
    }

    #[test]
    fn each_release_line_has_its_facts() {
        let (Some(v151), Some(v154), Some(v162)) = (data("v1.5.1"), data("v1.5.4"), data("v1.6.2"))
        else {
            println!("skipped: no reference data");
            return;
        };
        let (v151, v154, v162) = (
            read(&v151).unwrap(),
            read(&v154).unwrap(),
            read(&v162).unwrap(),
        );
        assert!(v151.has(Fact::Md0Default) && !v151.has(Fact::NodeGroupResources));
        assert!(v154.has(Fact::Md0Default) && v154.has(Fact::NodeGroupResources));
        assert!(!v154.has(Fact::Oidc) && !v154.has(Fact::MaxUnhealthy));
        assert!(!v162.has(Fact::Md0Default));
        for fact in Fact::ALL
            .iter()
            .filter(|f| !matches!(f, Fact::Md0Default | Fact::PositiveDuration | Fact::PodCpu))
        {
            assert!(v162.has(*fact), "{fact:?}");
        }
        assert!(!v162.has(Fact::PositiveDuration) && !v162.has(Fact::PodCpu));
        if let Some(candidate) = data("main-3c780acd") {
            let candidate = read(&candidate).unwrap();
            assert!(candidate.has(Fact::PositiveDuration) && candidate.has(Fact::PodCpu));
        }
        assert_eq!(v154.kubernetes.first().map(String::as_str), Some("v1.30"));
        assert_eq!(v162.kubernetes.first().map(String::as_str), Some("v1.31"));
        assert_eq!(v162.kinds.len(), 30);
        let vpc = v162
            .kinds
            .iter()
            .find(|k| k.kind == "VirtualPrivateCloud")
            .unwrap();
        assert_eq!(vpc.chart, "apps/vpc");
        assert_eq!(vpc.prefix, "virtualprivatecloud-");
        assert_eq!(
            v162.fixed_names.keys().collect::<Vec<_>>(),
            ["BootBox", "Etcd", "Ingress", "Monitoring"]
        );
    }
}
