//! Turning the errors of tower's layers into [`CamelError`]s.

use camel_api::CamelError;
use tower::BoxError;

/// Maps an error from a tower layer (its `BoxError`) to a typed [`CamelError`]:
///
/// - a `CamelError` from the wrapped steps comes back as it was;
/// - [`tower::timeout::error::Elapsed`] becomes [`CamelError::Timeout`];
/// - [`tower::load_shed::error::Overloaded`] becomes [`CamelError::Overloaded`];
/// - anything else becomes [`CamelError::External`] with the original error as its source.
pub fn into_camel_error(error: impl Into<BoxError>) -> CamelError {
    let error = error.into();
    let error = match error.downcast::<CamelError>() {
        Ok(camel) => return *camel,
        Err(other) => other,
    };
    if error.is::<tower::timeout::error::Elapsed>() {
        return CamelError::Timeout(
            "the wrapped steps did not finish within the timeout layer's deadline".into(),
        );
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return CamelError::Overloaded(
            "the wrapped steps were not ready, so the call was shed".into(),
        );
    }
    CamelError::External {
        context: "tower layer".into(),
        source: error.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_tower_errors_become_typed_variants() {
        let timeout = into_camel_error(tower::timeout::error::Elapsed::new());
        assert!(matches!(timeout, CamelError::Timeout(_)), "{timeout:?}");
        let shed = into_camel_error(tower::load_shed::error::Overloaded::new());
        assert!(matches!(shed, CamelError::Overloaded(_)), "{shed:?}");
        let own = into_camel_error(CamelError::processor("boom"));
        assert!(matches!(&own, CamelError::Processor(m) if &**m == "boom"));
        let other = into_camel_error(std::io::Error::other("disk"));
        assert!(matches!(other, CamelError::External { .. }));
        assert!(other.to_string().contains("disk"));
    }
}
