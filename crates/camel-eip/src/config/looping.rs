//! `loop` and `sort`.

use camel_api::definition::{StepConfig, StepDefinition};
use camel_api::expression_config;

expression_config! {
    /// `loop: {constant: 3, steps: [...]}` runs the steps a number of times;
    /// `loop: {do_while: true, simple: "${header.more}", steps: [...]}` while the
    /// predicate holds.
    ///
    /// ```
    /// use camel_eip::config::Loop;
    /// let l = Loop::times(3).copy(true);
    /// assert!(l.copy);
    /// ```
    pub struct Loop {
        /// The expression is a predicate tested before each iteration.
        #[serde(default, skip_serializing_if = "std::ops::Not::not", alias = "doWhile")]
        pub do_while: bool,
        /// Each iteration starts from a copy of the exchange the loop received, instead of
        /// the previous iteration's result.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub copy: bool,
        /// Accepted for Camel files; a stopping route ends a loop at its next iteration.
        #[serde(default, skip_serializing_if = "Option::is_none", alias = "breakOnShutdown")]
        pub break_on_shutdown: Option<bool>,
        /// The steps of one iteration.
        #[serde(default)]
        pub steps: Vec<StepDefinition>,
    }
}

impl StepConfig for Loop {
    const NAME: &'static str = "loop";
}

impl Loop {
    /// Runs the steps `n` times.
    pub fn times(n: u64) -> Self {
        Loop {
            constant: Some(camel_api::definition::LanguageValue {
                text: n.to_string(),
                options: Default::default(),
            }),
            ..Default::default()
        }
    }

    /// Runs the steps while `predicate` holds.
    pub fn while_(predicate: camel_api::definition::ExpressionDefinition) -> Self {
        use camel_api::definition::WithExpression;
        let mut l = Loop {
            do_while: true,
            ..Default::default()
        };
        l.set_expression(predicate);
        l
    }

    /// Starts each iteration from a copy of the input.
    pub fn copy(mut self, yes: bool) -> Self {
        self.copy = yes;
        self
    }
}

expression_config! {
    /// `sort: {simple: "${body}", comparator: reverse}`: the expression's list (the body
    /// when there is none), sorted, becomes the body as a JSON array.
    pub struct Sort {
        /// `natural` (default) or `reverse`; Camel's comparator is a Java bean.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub comparator: Option<String>,
    }
}

impl StepConfig for Sort {
    const NAME: &'static str = "sort";
}

#[cfg(test)]
mod tests {
    use super::*;
    use camel_api::definition::WithExpression;
    use serde_json::json;

    #[test]
    fn camel_spellings_read() {
        let l: Loop = serde_json::from_value(json!({
            "doWhile": true, "simple": "${header.more}", "copy": true, "steps": [{"log": "x"}],
        }))
        .unwrap();
        assert!(l.do_while && l.copy);
        assert_eq!(l.expression().unwrap().1.text, "${header.more}");
        let s: Sort = serde_json::from_value(json!({"comparator": "reverse"})).unwrap();
        assert_eq!(s.comparator.as_deref(), Some("reverse"));
    }
}
