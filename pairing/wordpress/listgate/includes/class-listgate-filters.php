<?php
/**
 * The search filters of [listgate_listings]: the visitor's query
 * parameters checked against the site's /fields, the API query they make,
 * and the filter form's variables.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Checks the visitor's filters. A value /fields does not list is ignored,
 * so every filter combination sent to Listgate (and cached) is one of a
 * bounded set, and made-up values cost no API call.
 */
class Listgate_Filters {

	/**
	 * The visitor's filters: query parameter of the page => parameter of the API.
	 */
	const FILTERS = array(
		'lg_type'      => 'type',
		'lg_suburb'    => 'suburb',
		'lg_price_min' => 'min_price',
		'lg_price_max' => 'max_price',
		'lg_bedrooms'  => 'min_bedrooms',
	);

	/**
	 * Listing types of the API.
	 */
	const TYPES = array( 'residential', 'rental', 'land', 'commercial', 'commercial_land', 'rural', 'business', 'holiday_rental' );

	/**
	 * The most bedrooms the filter offers.
	 */
	const MAX_BEDROOMS = 10;

	/**
	 * The API query of the grid's first page.
	 *
	 * @param array $filters  The checked filters (from_query()).
	 * @param int   $per_page Listings per page.
	 * @return array
	 */
	public static function api_query( $filters, $per_page ) {
		$query = array(
			'page'     => 1,
			'per_page' => $per_page,
		);
		foreach ( self::FILTERS as $var => $param ) {
			if ( '' !== $filters[ $var ] ) {
				$query[ $param ] = $filters[ $var ];
			}
		}
		return $query;
	}

	/**
	 * The field definitions of a /fields collection by name.
	 *
	 * @param mixed $fields The collection.
	 * @return array|null name => definition; null when $fields is not a collection.
	 */
	public static function field_defs( $fields ) {
		if ( ! is_array( $fields ) || ! isset( $fields['data'] ) || ! is_array( $fields['data'] ) ) {
			return null;
		}
		$defs = array();
		foreach ( $fields['data'] as $field ) {
			if ( is_array( $field ) && isset( $field['name'] ) && is_string( $field['name'] ) ) {
				$defs[ $field['name'] ] = $field;
			}
		}
		return $defs;
	}

	/**
	 * The visitor's filters from the query string, checked against the
	 * site's /fields: a type or suburb it does not list, and bedrooms past
	 * its largest count, are ignored; prices are rounded to two significant
	 * digits (the minimum down, the maximum up). Without /fields (it could
	 * not be read) the suburb is ignored. So every filter combination that
	 * reaches Listgate, and its cache, is one of a bounded set.
	 *
	 * @param array|null $defs Field definitions by name (field_defs()), null when unknown.
	 * @return array lg_* => value ("" when unset or unusable).
	 */
	public static function from_query( $defs ) {
		$type = listgate_query_var( 'lg_type' );
		if ( ! in_array( $type, self::TYPES, true ) ) {
			$type = '';
		} elseif ( null !== $defs ) {
			$type = self::known_value( $defs, 'type', $type );
		}
		$suburb   = null === $defs ? '' : self::known_value( $defs, 'suburb', listgate_query_var( 'lg_suburb' ) );
		$min      = self::amount( listgate_query_var( 'lg_price_min' ) );
		$max      = self::amount( listgate_query_var( 'lg_price_max' ) );
		$bedrooms = listgate_query_var( 'lg_bedrooms' );
		$bedrooms = ctype_digit( $bedrooms ) && strlen( $bedrooms ) <= 2 ? (int) $bedrooms : 0;
		if ( null !== $min && null !== $max && $min > $max ) {
			list( $min, $max ) = array( $max, $min );
		}
		return array(
			'lg_type'      => $type,
			'lg_suburb'    => $suburb,
			'lg_price_min' => null === $min ? '' : (string) self::round_price( $min, false ),
			'lg_price_max' => null === $max ? '' : (string) self::round_price( $max, true ),
			'lg_bedrooms'  => $bedrooms > 0 && $bedrooms <= self::max_bedrooms( $defs ) ? (string) $bedrooms : '',
		);
	}

	/**
	 * A value of a field as /fields lists it, matched without regard to
	 * case.
	 *
	 * @param array  $defs  Field definitions by name.
	 * @param string $name  The field, e.g. "suburb".
	 * @param string $value The visitor's value.
	 * @return string The listed value, or "" when it is not listed.
	 */
	private static function known_value( $defs, $name, $value ) {
		if ( '' === $value ) {
			return '';
		}
		foreach ( array_keys( self::field_values( $defs, $name ) ) as $known ) {
			$known = (string) $known;
			if ( $known === $value || 0 === strcasecmp( $known, $value ) ) {
				return $known;
			}
		}
		return '';
	}

	/**
	 * The most bedrooms the filter offers: the site's largest count (from
	 * /fields), at most MAX_BEDROOMS; MAX_BEDROOMS when unknown.
	 *
	 * @param array|null $defs Field definitions by name.
	 * @return int
	 */
	private static function max_bedrooms( $defs ) {
		if ( isset( $defs['bedrooms']['max'] ) && is_numeric( $defs['bedrooms']['max'] ) ) {
			return max( 1, min( self::MAX_BEDROOMS, (int) $defs['bedrooms']['max'] ) );
		}
		return self::MAX_BEDROOMS;
	}

	/**
	 * A price typed by a visitor ("750,000", "$1.2m" is not understood) as
	 * whole dollars.
	 *
	 * @param string $raw The input.
	 * @return int|null Dollars, or null when unusable.
	 */
	private static function amount( $raw ) {
		$raw = str_replace( array( ',', '$', ' ' ), '', $raw );
		if ( '' === $raw || ! is_numeric( $raw ) || (float) $raw < 0 || (float) $raw > 1e12 ) {
			return null;
		}
		return (int) floor( (float) $raw );
	}

	/**
	 * A price rounded to two significant digits: 755,000 is 750,000 as a
	 * minimum and 760,000 as a maximum; below 100 it is kept.
	 *
	 * @param int  $dollars The price.
	 * @param bool $up      Whether to round up (a maximum) rather than down.
	 * @return int
	 */
	private static function round_price( $dollars, $up ) {
		if ( $dollars < 100 ) {
			return $dollars;
		}
		$step = 10 ** ( strlen( (string) $dollars ) - 2 );
		return (int) ( $up ? ceil( $dollars / $step ) : floor( $dollars / $step ) ) * $step;
	}

	/**
	 * The variables of the filters template.
	 *
	 * @param array      $filters The current filters.
	 * @param array|null $defs    Field definitions by name (field_defs()), or null when /fields could not be read.
	 * @return array
	 */
	public static function form_args( $filters, $defs ) {
		$defs = is_array( $defs ) ? $defs : array();

		$types = array();
		foreach ( self::field_values( $defs, 'type' ) as $value => $count ) {
			if ( in_array( $value, self::TYPES, true ) && ( $count > 0 || $value === $filters['lg_type'] ) ) {
				$types[ $value ] = self::option_label( Listgate_Format::type_label( $value ), $count );
			}
		}
		if ( '' !== $filters['lg_type'] && ! isset( $types[ $filters['lg_type'] ] ) ) {
			$types[ $filters['lg_type'] ] = Listgate_Format::type_label( $filters['lg_type'] );
		}

		$suburbs = array();
		foreach ( self::field_values( $defs, 'suburb' ) as $value => $count ) {
			$suburbs[ $value ] = self::option_label( $value, $count );
		}
		if ( '' !== $filters['lg_suburb'] && ! isset( $suburbs[ $filters['lg_suburb'] ] ) ) {
			$suburbs[ $filters['lg_suburb'] ] = $filters['lg_suburb'];
		}

		$max_beds = isset( $defs['bedrooms']['max'] ) ? self::max_bedrooms( $defs ) : 5;
		$max_beds = max( $max_beds, (int) $filters['lg_bedrooms'] );
		$bedrooms = array();
		for ( $n = 1; $n <= $max_beds; $n++ ) {
			/* translators: %d: number of bedrooms. */
			$bedrooms[ (string) $n ] = sprintf( _n( '%d+ bedroom', '%d+ bedrooms', $n, 'listgate' ), $n );
		}

		return array(
			'values'      => $filters,
			'types'       => $types,
			'suburbs'     => $suburbs,
			'bedrooms'    => $bedrooms,
			'action'      => self::form_action(),
			'hidden'      => self::other_query_vars(),
			'reset_url'   => remove_query_arg( array_merge( array_keys( self::FILTERS ), array( 'lg_page', 'lg_listing', 'lg_enquiry' ) ) ),
			'has_filters' => '' !== implode( '', $filters ),
		);
	}

	/**
	 * The values of a field definition with their counts.
	 *
	 * @param array  $defs Field definitions by name.
	 * @param string $name The field.
	 * @return array value => count.
	 */
	private static function field_values( $defs, $name ) {
		$out = array();
		if ( ! isset( $defs[ $name ]['values'] ) || ! is_array( $defs[ $name ]['values'] ) ) {
			return $out;
		}
		foreach ( $defs[ $name ]['values'] as $v ) {
			if ( is_array( $v ) && isset( $v['value'] ) && is_scalar( $v['value'] ) && '' !== (string) $v['value'] ) {
				$out[ (string) $v['value'] ] = isset( $v['count'] ) && is_numeric( $v['count'] ) ? (int) $v['count'] : 0;
			}
		}
		return $out;
	}

	/**
	 * An option's label with its count.
	 *
	 * @param string $label The label.
	 * @param int    $count Current listings with the value.
	 * @return string
	 */
	private static function option_label( $label, $count ) {
		return $count > 0 ? sprintf( '%s (%s)', $label, number_format_i18n( $count ) ) : $label;
	}

	/**
	 * The filter form's action: the current path without its query (the
	 * query variables are carried as hidden inputs).
	 *
	 * @return string
	 */
	private static function form_action() {
		$uri  = isset( $_SERVER['REQUEST_URI'] ) ? esc_url_raw( wp_unslash( $_SERVER['REQUEST_URI'] ) ) : '/';
		$path = strtok( $uri, '?#' );
		return false === $path || '' === $path ? '/' : $path;
	}

	/**
	 * The current query variables that are not the plugin's (page_id, …),
	 * to keep them in the filter form.
	 *
	 * @return array name => value.
	 */
	private static function other_query_vars() {
		$out = array();
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- read-only: copied into a GET form.
		foreach ( $_GET as $name => $value ) {
			if ( ! is_string( $name ) || ! is_string( $value ) || str_starts_with( $name, 'lg_' ) || ! preg_match( '/^[A-Za-z0-9_\-]{1,64}$/', $name ) ) {
				continue;
			}
			$out[ $name ] = sanitize_text_field( wp_unslash( $value ) );
		}
		return $out;
	}
}
