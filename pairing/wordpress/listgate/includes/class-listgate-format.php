<?php
/**
 * Turns the API's listing JSON into text for templates.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Reads the fields of a listing (docs/api-reference.md "Listing") safely:
 * absent or null values give "" or null, never a PHP warning. Every method
 * returns plain text; templates escape it.
 */
class Listgate_Format {

	/**
	 * A nested value of an array, or null.
	 *
	 * @param mixed    $data The array.
	 * @param string[] $path Keys.
	 * @return mixed
	 */
	public static function value( $data, $path ) {
		foreach ( $path as $key ) {
			if ( ! is_array( $data ) || ! array_key_exists( $key, $data ) ) {
				return null;
			}
			$data = $data[ $key ];
		}
		return $data;
	}

	/**
	 * A nested string value, or "".
	 *
	 * @param mixed    $data The array.
	 * @param string[] $path Keys.
	 * @return string
	 */
	public static function text( $data, $path ) {
		$v = self::value( $data, $path );
		return is_scalar( $v ) ? trim( (string) $v ) : '';
	}

	/**
	 * The listing's ref.
	 *
	 * @param array $listing The listing.
	 * @return int
	 */
	public static function ref( $listing ) {
		return (int) self::value( $listing, array( 'listing_ref' ) );
	}

	/**
	 * The listing's address as shown (privacy rules already applied by the API).
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	public static function address( $listing ) {
		$formatted = self::text( $listing, array( 'address', 'formatted' ) );
		return '' !== $formatted ? $formatted : self::suburb( $listing );
	}

	/**
	 * The suburb, or "".
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	public static function suburb( $listing ) {
		return self::text( $listing, array( 'address', 'suburb' ) );
	}

	/**
	 * The heading: the headline, else the address.
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	public static function title( $listing ) {
		$headline = self::text( $listing, array( 'headline' ) );
		if ( '' !== $headline ) {
			return $headline;
		}
		$address = self::address( $listing );
		if ( '' !== $address ) {
			return $address;
		}
		/* translators: %d: the listing's number. */
		return sprintf( __( 'Listing %d', 'listgate' ), self::ref( $listing ) );
	}

	/**
	 * The price line: sold, rent or sale price text.
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	public static function price( $listing ) {
		$status = self::text( $listing, array( 'status' ) );
		if ( 'sold' === $status ) {
			$amount = self::value( $listing, array( 'sold', 'amount' ) );
			/* translators: %s: the sold price. */
			return is_numeric( $amount ) ? sprintf( __( 'Sold for %s', 'listgate' ), self::money( $amount ) ) : __( 'Sold', 'listgate' );
		}
		if ( 'leased' === $status ) {
			return __( 'Leased', 'listgate' );
		}
		// Rentals show their rent; a commercial listing for sale and lease shows its price.
		$rental = in_array( self::text( $listing, array( 'type' ) ), array( 'rental', 'holiday_rental' ), true )
			|| ! is_array( self::value( $listing, array( 'price' ) ) );
		$text   = $rental ? self::rent( $listing ) : '';
		if ( '' === $text ) {
			$text = self::text( $listing, array( 'price', 'display_text' ) );
		}
		if ( '' === $text && is_numeric( self::value( $listing, array( 'price', 'amount' ) ) ) ) {
			$text = self::money( self::value( $listing, array( 'price', 'amount' ) ) );
		}
		if ( '' === $text ) {
			$text = self::rent( $listing );
		}
		if ( '' !== $text && true === self::value( $listing, array( 'under_offer' ) ) ) {
			/* translators: %s: the price. */
			$text = sprintf( __( '%s (under offer)', 'listgate' ), $text );
		}
		return $text;
	}

	/**
	 * The rent line.
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	private static function rent( $listing ) {
		$text = self::text( $listing, array( 'rent', 'display_text' ) );
		if ( '' !== $text ) {
			return $text;
		}
		$amount = self::value( $listing, array( 'rent', 'amount' ) );
		if ( ! is_numeric( $amount ) ) {
			return '';
		}
		switch ( self::text( $listing, array( 'rent', 'period' ) ) ) {
			case 'month':
				/* translators: %s: the rent. */
				return sprintf( __( '%s per month', 'listgate' ), self::money( $amount ) );
			case 'annual':
			case 'year':
				/* translators: %s: the rent. */
				return sprintf( __( '%s per year', 'listgate' ), self::money( $amount ) );
			default:
				/* translators: %s: the rent. */
				return sprintf( __( '%s per week', 'listgate' ), self::money( $amount ) );
		}
	}

	/**
	 * A dollar amount, e.g. "$750,000".
	 *
	 * @param mixed $amount The number.
	 * @return string
	 */
	public static function money( $amount ) {
		return '$' . number_format_i18n( (float) $amount, floor( (float) $amount ) === (float) $amount ? 0 : 2 );
	}

	/**
	 * A feature count (bedrooms, bathrooms, car_spaces, …), or null.
	 *
	 * @param array  $listing The listing.
	 * @param string $name    The feature.
	 * @return int|null
	 */
	public static function feature( $listing, $name ) {
		$v = self::value( $listing, array( 'features', $name ) );
		return is_numeric( $v ) ? (int) $v : null;
	}

	/**
	 * The media of a kind, in order.
	 *
	 * @param array  $listing The listing.
	 * @param string $kind    image, floorplan, document, video or link.
	 * @return array[] Each with url (an http(s) URL) and the other media fields.
	 */
	public static function media( $listing, $kind = 'image' ) {
		$out   = array();
		$media = self::value( $listing, array( 'media' ) );
		if ( ! is_array( $media ) ) {
			return $out;
		}
		foreach ( $media as $item ) {
			if ( ! is_array( $item ) || self::text( $item, array( 'kind' ) ) !== $kind ) {
				continue;
			}
			$url = self::text( $item, array( 'url' ) );
			if ( ! preg_match( '#^https?://#i', $url ) ) {
				continue;
			}
			$out[] = $item;
		}
		usort(
			$out,
			function ( $a, $b ) {
				return (int) self::value( $a, array( 'position' ) ) <=> (int) self::value( $b, array( 'position' ) );
			}
		);
		return $out;
	}

	/**
	 * The first image's URL, or "".
	 *
	 * @param array $listing The listing.
	 * @return string
	 */
	public static function first_image( $listing ) {
		$images = self::media( $listing, 'image' );
		return empty( $images ) ? '' : self::text( $images[0], array( 'url' ) );
	}

	/**
	 * An area with its unit, e.g. "650 m²".
	 *
	 * @param mixed  $area The number.
	 * @param string $unit The feed's unit: squareMeter, hectare, acre, square, …
	 * @return string
	 */
	public static function area( $area, $unit ) {
		$units = array(
			'squareMeter' => 'm²',
			'squareMetre' => 'm²',
			'hectare'     => 'ha',
			'acre'        => __( 'acres', 'listgate' ),
			'square'      => __( 'squares', 'listgate' ),
			'squareFeet'  => 'ft²',
		);
		$unit = isset( $units[ $unit ] ) ? $units[ $unit ] : $unit;
		return trim( number_format_i18n( (float) $area, floor( (float) $area ) === (float) $area ? 0 : 2 ) . ' ' . $unit );
	}

	/**
	 * A readable listing type.
	 *
	 * @param string $type E.g. "commercial_land".
	 * @return string E.g. "Commercial land".
	 */
	public static function type_label( $type ) {
		$labels = array(
			'residential'     => __( 'Residential', 'listgate' ),
			'rental'          => __( 'Rental', 'listgate' ),
			'land'            => __( 'Land', 'listgate' ),
			'commercial'      => __( 'Commercial', 'listgate' ),
			'commercial_land' => __( 'Commercial land', 'listgate' ),
			'rural'           => __( 'Rural', 'listgate' ),
			'business'        => __( 'Business', 'listgate' ),
			'holiday_rental'  => __( 'Holiday rental', 'listgate' ),
		);
		return isset( $labels[ $type ] ) ? $labels[ $type ] : ucfirst( str_replace( '_', ' ', $type ) );
	}

	/**
	 * An RFC 3339 time in the listing's own offset, e.g. "Saturday 4 May 2024, 10:00 am".
	 *
	 * @param string $iso    The time.
	 * @param string $format A date() format; default: the site's date and time formats.
	 * @return string "" when $iso cannot be read.
	 */
	public static function datetime( $iso, $format = '' ) {
		if ( ! is_string( $iso ) || '' === $iso ) {
			return '';
		}
		try {
			$dt = new DateTimeImmutable( $iso );
		} catch ( Exception $e ) {
			return '';
		}
		if ( '' === $format ) {
			$format = 'l j F Y, ' . get_option( 'time_format', 'g:i a' );
		}
		$out = wp_date( $format, $dt->getTimestamp(), $dt->getTimezone() );
		return false === $out ? '' : $out;
	}
}
