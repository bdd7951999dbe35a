//! `marshal`, `unmarshal` and `convert_body_to`.

use camel_api::BoxProcessor;
use camel_eip::config::{ConvertBodyTo, Marshal, Unmarshal};
use camel_eip::convert::{self, BodyType};

use crate::compiler::StepContext;
use crate::error::{RouteError, RouteErrorKind};

fn no_format(cx: &StepContext<'_>) -> RouteError {
    cx.error(RouteErrorKind::Missing("a data format (`json: {}`)".into()))
}

pub(super) fn marshal(
    config: Marshal,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let json = config.json.ok_or_else(|| no_format(cx))?;
    Ok(convert::marshal_json(json.pretty_print))
}

pub(super) fn unmarshal(
    config: Unmarshal,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    config.json.ok_or_else(|| no_format(cx))?;
    Ok(convert::unmarshal_json())
}

/// `convert_body_to: String` or `convert_body_to: {type: String}`.
pub(super) fn convert_body_to(
    config: ConvertBodyTo,
    cx: &mut StepContext<'_>,
) -> Result<BoxProcessor, RouteError> {
    let to = BodyType::parse(&config.to).ok_or_else(|| {
        cx.error_at(
            "/type",
            RouteErrorKind::InvalidValue(format!(
                "cannot convert a body to `{}` (use String, bytes or json)",
                config.to
            )),
        )
    })?;
    Ok(convert::convert_body_to(to))
}
