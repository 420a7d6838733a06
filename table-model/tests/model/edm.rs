//! EDM values and DateTime: conversions and round trips on arbitrary input.

use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use table_model::limits::{DATETIME_MAX_TICKS, DATETIME_MIN_TICKS};
use table_model::{DateTime, EdmType, EdmValue, FromEdm, IntoEdm, ValueErrorKind};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn datetime_text_round_trip(ticks in DATETIME_MIN_TICKS..=DATETIME_MAX_TICKS) {
        let d = DateTime::from_ticks(ticks).unwrap();
        let text = d.to_string();
        prop_assert_eq!(text.len(), 28);
        prop_assert_eq!(DateTime::parse(&text).unwrap(), d);
        // chrono agrees on the text, to the nanosecond.
        let c = chrono::DateTime::parse_from_rfc3339(&text).unwrap().to_utc();
        prop_assert_eq!(c, d.to_chrono());
        prop_assert_eq!(DateTime::from_chrono(c).unwrap(), d);
    }

    #[test]
    fn datetime_out_of_range_is_an_error(ticks in prop_oneof![i64::MIN..DATETIME_MIN_TICKS, (DATETIME_MAX_TICKS + 1)..=i64::MAX]) {
        let err = DateTime::from_ticks(ticks).unwrap_err();
        let is_range_error = matches!(err.kind(), ValueErrorKind::DateTimeOutOfRange { .. });
        prop_assert!(is_range_error);
    }

    #[test]
    fn datetime_parse_never_panics(s in "\\PC{0,40}|[0-9T:.Z+-]{0,35}") {
        if let Ok(d) = DateTime::parse(&s) {
            prop_assert_eq!(DateTime::parse(&d.to_string()).unwrap(), d);
        }
    }

    #[test]
    fn integers_round_trip_through_edm(a in any::<i32>(), b in any::<i64>(), c in any::<u32>(), d in any::<u16>()) {
        prop_assert_eq!(i32::from_edm(a.into_edm().unwrap()).unwrap(), a);
        prop_assert_eq!(i64::from_edm(b.into_edm().unwrap()).unwrap(), b);
        prop_assert_eq!(u32::from_edm(c.into_edm().unwrap()).unwrap(), c);
        prop_assert_eq!(u16::from_edm(d.into_edm().unwrap()).unwrap(), d);
        prop_assert_eq!(c.into_edm().unwrap().edm_type(), EdmType::Int64);
    }

    #[test]
    fn doubles_round_trip_bit_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        let back = f64::from_edm(x.into_edm().unwrap()).unwrap();
        prop_assert_eq!(back.to_bits(), bits);
    }
}

#[test]
fn chrono_values_outside_the_service_range_are_refused_not_clamped() {
    let early = Utc.with_ymd_and_hms(1600, 6, 1, 0, 0, 0).unwrap();
    let err = EdmValue::try_from(early).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found 1600-06-01T00:00:00+00:00"
    );
    assert!(EdmValue::try_from(chrono::DateTime::<Utc>::MIN_UTC).is_err());
}

#[test]
fn every_edm_type_has_its_variant() {
    let values = [
        EdmValue::try_from(vec![1u8]).unwrap(),
        EdmValue::from(true),
        EdmValue::from(DateTime::UNIX_EPOCH),
        EdmValue::from(1.5),
        EdmValue::from(uuid::Uuid::nil()),
        EdmValue::from(1),
        EdmValue::from(1i64),
        EdmValue::try_from("s").unwrap(),
    ];
    let types: Vec<EdmType> = values.iter().map(EdmValue::edm_type).collect();
    assert_eq!(types, EdmType::ALL);
}
