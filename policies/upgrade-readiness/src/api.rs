//! cozystack-api, which serves every Cozystack application, must be
//! Available before the upgrade.
//!
//! Source, at v1.6.2: `packages/system/cozystack-api/templates/apiservice.yaml`
//! registers `apps.cozystack.io/v1alpha1` as the APIService
//! `v1alpha1.apps.cozystack.io`, served by cozystack-api through the
//! aggregation layer. While that APIService is not Available, discovery
//! lacks the group and kubectl answers "the server doesn't have a resource
//! type" for every application kind. Migrations 46 and 47 take exactly that
//! answer for a cluster without Kubernetes applications
//! (`migrations/46:67-80`, `47:43-56`: `*"the server doesn't have a
//! resource type"*) ... nothing to migrate`): with cozystack-api down during
//! the pre-upgrade hook, migration 46 bumps no v1.30 cluster and migration
//! 47 pins no md0, which Helm then prunes with its MachineDeployment, and
//! both stamp their version as if they had run. The APIService's
//! `Available` condition is kube-aggregator's verdict on cozystack-api.

use shared::{Field, FieldError, Finding, Request};

use crate::Settings;
use crate::rules::COZYSTACK_API_UNAVAILABLE;

/// The API group of APIServices.
pub const GROUP: &str = "apiregistration.k8s.io";

/// The APIService of the applications' group.
pub const APPS_API_SERVICE: &str = "v1alpha1.apps.cozystack.io";

/// The APIService `v1alpha1.apps.cozystack.io`: is cozystack-api Available?
/// Other APIServices are not judged.
pub fn cozystack_api(
    request: &Request<'_>,
    object: &Field<'_>,
    _: &Settings,
) -> Result<Vec<Finding>, FieldError> {
    if &*request.name != APPS_API_SERVICE {
        return Ok(Vec::new());
    }
    let conditions = object.at("status.conditions")?;
    let mut available = None;
    for condition in conditions.items()? {
        if condition.field("type")?.string()? == Some("Available") {
            available = Some(condition);
        }
    }
    let state = match &available {
        Some(condition) => {
            let [status, reason, message] = condition.members(["status", "reason", "message"])?;
            if status.string()? == Some("True") {
                return Ok(Vec::new());
            }
            format!(
                "is not Available (status {}, {}: {})",
                status.string()?.unwrap_or("unknown"),
                reason.string()?.unwrap_or("no reason"),
                message.string()?.unwrap_or("no message")
            )
        }
        None => "has no Available condition".to_owned(),
    };
    Ok(vec![Finding::new(
        COZYSTACK_API_UNAVAILABLE,
        available.map_or_else(|| conditions.path(), |condition| condition.path()),
        format!(
            "APIService {APPS_API_SERVICE} {state}: while cozystack-api is down, kubectl says \"the server \
             doesn't have a resource type\" for every application, which migrations 46 and 47 take for a \
             cluster without them, so 46 bumps no v1.30 cluster and 47 pins no md0 (Helm then prunes its \
             MachineDeployment). Bring cozystack-api back (kubectl --namespace cozy-system get pods) until \
             the APIService is Available, then upgrade"
        ),
    )])
}
