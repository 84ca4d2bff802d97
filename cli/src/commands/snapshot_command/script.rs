//! The capture script `snapshot-command` prints: one `kubectl get` per kind
//! the bundle's policies read (their `contextAwareResources`) and the
//! checklist judges, and per object they read by name, into
//! `snapshot.yaml`, with the record of how each read ended.
//!
//! A read that fails leaves no objects, as an empty list does; the record
//! ([`capabilities::snapshot::Capture`]) is what tells them apart, so the
//! script never silences kubectl: it sorts each failure into forbidden,
//! timeout, not installed (the cluster does not serve the kind, so it has
//! none of it) or failed, keeps kubectl's first line, and exits 1 when a
//! read failed. Secrets are copied without their credentials: only the data
//! keys the policies compare, and for each credential they check, whether
//! it is non-empty ([`capabilities::snapshot::CAPTURED_KEYS`]).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use capabilities::snapshot::{
    CAPTURE_API_VERSION, CAPTURE_KIND, CAPTURED_KEYS, REDACTED, resource,
};
use host::PolicyModule;

use crate::checklist::checks::{CHECKS, Judged};

/// One `kubectl get` of the script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Get {
    resource: String,
    api_version: String,
    kind: String,
    /// `(namespace, name)` for a read of one object.
    only: Option<(String, String)>,
    /// A go-template that keeps less of the objects than `-o yaml`.
    template: Option<String>,
}

/// Kinds the script never captures whole, whatever `contextAwareResources`
/// grants: a snapshot has no business copying a cluster's configuration
/// and credentials. The objects of them the policies read are captured by
/// name (the Secrets of their metadata, the ConfigMaps the checklist
/// names, the Deployment that records the cluster's release); a read of
/// any other fails against the snapshot, so a rule that makes one says it
/// did not check.
const BY_NAME_ONLY: &[(&str, &str)] = &[
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("apps/v1", "Deployment"),
];

/// The one Deployment a policy reads: the one that records the cluster's
/// release ([`release::recorded`]).
const OPERATOR: (&str, &str) = ("apps/v1", "Deployment");

/// Kinds whose objects the policies read only in part, and that are large
/// or sensitive whole: a go-template keeps what they read.
fn list_template(api_version: &str, kind: &str) -> Option<String> {
    let head = |kind: &str| {
        format!(
            "{{{{range .items}}}}---{{{{\"\\n\"}}}}apiVersion: {api_version}{{{{\"\\n\"}}}}kind: {kind}{{{{\"\\n\"}}}}\
             metadata:{{{{\"\\n\"}}}}  name: {{{{.metadata.name}}}}{{{{\"\\n\"}}}}"
        )
    };
    match (api_version, kind) {
        // Only whether a CRD is installed: their schemas run to megabytes.
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            Some(format!("{}{{{{end}}}}", head(kind)))
        }
        // Only the kubelet's version.
        ("v1", "Node") => Some(format!(
            "{}status:{{{{\"\\n\"}}}}  nodeInfo:{{{{\"\\n\"}}}}    kubeletVersion: \
             {{{{.status.nodeInfo.kubeletVersion}}}}{{{{\"\\n\"}}}}{{{{end}}}}",
            head(kind)
        )),
        _ => None,
    }
}

/// A Secret as the snapshot keeps it: its name, the `values` keys as they
/// are, each non-empty `credentials` key as [`REDACTED`], and the list of
/// keys it examined.
fn secret_template(values: &BTreeSet<String>, credentials: &BTreeSet<String>) -> String {
    let nl = "{{\"\\n\"}}";
    let examined: Vec<&str> = values
        .iter()
        .chain(credentials)
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut data = String::new();
    for key in values {
        data.push_str(&format!(
            "{{{{with index . \"{key}\"}}}}{nl}  {key}: {{{{.}}}}{{{{end}}}}"
        ));
    }
    for key in credentials {
        data.push_str(&format!(
            "{{{{if index . \"{key}\"}}}}{nl}  {key}: {REDACTED}{{{{end}}}}"
        ));
    }
    format!(
        "apiVersion: v1{nl}kind: Secret{nl}metadata:{nl}  name: {{{{.metadata.name}}}}{nl}  \
         namespace: {{{{.metadata.namespace}}}}{nl}  annotations:{nl}    {CAPTURED_KEYS}: \"{}\"{nl}\
         data:{{{{with .data}}}}{data}{{{{end}}}}{nl}",
        examined.join(" ")
    )
}

/// Every read the script makes, in order: whole kinds, then objects by name.
fn gets(modules: &[PolicyModule]) -> Result<Vec<Get>> {
    let mut kinds: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut secrets: BTreeMap<(String, String), (BTreeSet<String>, BTreeSet<String>)> =
        BTreeMap::new();
    let mut reads_release = false;
    let mut add_kind = |api_version: &str, kind: &str| {
        let (group, _) = shared::apps::group_version(api_version);
        kinds
            .entry(resource(group, kind))
            .or_insert_with(|| (api_version.to_owned(), kind.to_owned()));
    };
    for module in modules {
        let Some(metadata) = module.metadata() else {
            continue;
        };
        for read in &metadata.context_aware_resources {
            let read = (read.api_version.as_str(), read.kind.as_str());
            if !BY_NAME_ONLY.contains(&read) {
                add_kind(read.0, read.1);
            }
            reads_release |= read == OPERATOR;
        }
        for read in metadata.secret_reads().map_err(anyhow::Error::msg)? {
            let keys = secrets.entry((read.namespace, read.name)).or_default();
            keys.0.extend(read.values);
            keys.1.extend(read.credentials);
        }
    }
    let mut named: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    if reads_release {
        named.insert((
            OPERATOR.0.to_owned(),
            OPERATOR.1.to_owned(),
            release::OPERATOR_NAMESPACE.to_owned(),
            release::OPERATOR.to_owned(),
        ));
    }
    for check in CHECKS {
        if let Judged::Rules { targets, .. } = check.judged {
            for target in targets {
                match target.only {
                    None => add_kind(target.api_version, target.kind),
                    Some((namespace, name)) => {
                        named.insert((
                            target.api_version.to_owned(),
                            target.kind.to_owned(),
                            namespace.to_owned(),
                            name.to_owned(),
                        ));
                    }
                }
            }
        }
    }
    let mut gets: Vec<Get> = kinds
        .into_iter()
        .map(|(resource, (api_version, kind))| Get {
            template: list_template(&api_version, &kind),
            resource,
            api_version,
            kind,
            only: None,
        })
        .collect();
    let listed: BTreeSet<String> = gets.iter().map(|g| g.resource.clone()).collect();
    for (api_version, kind, namespace, name) in named {
        let (group, _) = shared::apps::group_version(&api_version);
        let resource = resource(group, &kind);
        if !listed.contains(&resource) {
            gets.push(Get {
                resource,
                api_version,
                kind,
                only: Some((namespace, name)),
                template: None,
            });
        }
    }
    for ((namespace, name), (values, credentials)) in secrets {
        gets.push(Get {
            resource: "secrets".to_owned(),
            api_version: "v1".to_owned(),
            kind: "Secret".to_owned(),
            template: Some(secret_template(&values, &credentials)),
            only: Some((namespace, name)),
        });
    }
    Ok(gets)
}

/// A word for the shell, in single quotes.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The capture function the script calls once per read.
const CAPTURE: &str = r#"capture() { # API_VERSION KIND RESOURCE [NAMESPACE NAME [GO-TEMPLATE]]
  local api=$1 kind=$2 resource=$3 namespace=${4:-} name=${5:-} template=${6:-} result
  local args=(get "$resource")
  if [ -n "$name" ]; then
    if [ -n "$namespace" ]; then args+=(--namespace "$namespace"); fi
    args+=("$name" --ignore-not-found)
  else
    args+=(--all-namespaces)
  fi
  if [ -n "$template" ]; then args+=(-o "go-template=$template"); else args+=(-o yaml); fi
  if kubectl --request-timeout=60s "${args[@]}" >"$tmp/objects" 2>"$tmp/error"; then
    result=captured
    { echo ---; cat "$tmp/objects"; echo; } >>"$out"
  else
    case $(cat "$tmp/error") in
      *"(Forbidden)"*|*" is forbidden: "*) result=forbidden ;;
      *"doesn't have a resource type"*|*"could not find the requested resource"*|*"no matches for kind"*) result=not-installed ;;
      *[Tt]imeout*|*"deadline exceeded"*|*"time allotted"*) result=timeout ;;
      *) result=failed ;;
    esac
    if [ "$result" != not-installed ]; then
      failed=$((failed + 1))
      echo "kubectl ${args[*]:0:3}: $result: $(head -n 1 "$tmp/error")" >&2
    fi
  fi
  {
    echo "- apiVersion: $api"
    echo "  kind: $kind"
    echo "  resource: $resource"
    if [ -n "$name" ]; then
      if [ -n "$namespace" ]; then echo "  namespace: $namespace"; fi
      echo "  name: $name"
    fi
    echo "  result: $result"
    if [ "$result" != captured ]; then
      printf "  message: '%s'\n" "$(head -n 1 "$tmp/error" | sed "s/'/''/g")"
    fi
  } >>"$tmp/reads"
}"#;

/// The shell block: `bash` reads the script from the here-document, so it
/// runs the same from any shell, and its exit status is the script's.
pub fn snapshot_command(modules: &[PolicyModule]) -> Result<String> {
    let mut out = String::from(
        "# What the bundle's policies read and the 1.6 upgrade checklist judges, from the management\n\
         # cluster, into snapshot.yaml, with how each read ended; Secrets without their credentials.\n\
         # Exits 1 when a read failed. Then: cozystack-policies preflight snapshot.yaml\n\
         bash -s <<'CAPTURE'\n\
         set -u\n\
         out=snapshot.yaml failed=0\n\
         tmp=$(mktemp -d) || exit 2\n\
         trap 'rm -rf \"$tmp\"' EXIT\n\
         : >\"$out\" && : >\"$tmp/reads\" || exit 2\n",
    );
    out.push_str(CAPTURE);
    out.push('\n');
    for get in gets(modules)? {
        let mut words = vec![get.api_version, get.kind, get.resource];
        match (get.only, get.template) {
            (None, None) => {}
            (None, Some(template)) => words.extend([String::new(), String::new(), template]),
            (Some((namespace, name)), template) => {
                words.extend([namespace, name]);
                words.extend(template);
            }
        }
        let words: Vec<String> = words
            .iter()
            .map(|w| {
                if !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"./-".contains(&b))
                {
                    w.clone()
                } else {
                    quoted(w)
                }
            })
            .collect();
        out.push_str(&format!("capture {}\n", words.join(" ")));
    }
    out.push_str(&format!(
        "{{\n  echo ---\n  echo 'apiVersion: {CAPTURE_API_VERSION}'\n  echo 'kind: {CAPTURE_KIND}'\n  \
         echo 'metadata: {{name: snapshot}}'\n  \
         printf \"context: '%s'\\n\" \"$(kubectl config current-context 2>/dev/null | sed \"s/'/''/g\")\"\n  \
         echo \"capturedAt: '$(date -u +%Y-%m-%dT%H:%M:%SZ)'\"\n  echo 'reads:'\n  cat \"$tmp/reads\"\n\
         }} >>\"$out\"\n"
    ));
    out.push_str(
        "if [ \"$failed\" -gt 0 ]; then\n  \
         echo \"$failed read(s) failed: the preflight reports the checks that need them as NOT CHECKED\" >&2\n  \
         exit 1\nfi\nCAPTURE\n",
    );
    Ok(out)
}
