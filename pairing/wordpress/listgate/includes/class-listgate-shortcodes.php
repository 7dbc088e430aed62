<?php
/**
 * The visitor shortcodes: [listgate_listings], [listgate_listing] and
 * [listgate_featured].
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Renders listings from the Listgate read API.
 */
class Listgate_Shortcodes {

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
	 * Registers the shortcodes and the stylesheet.
	 *
	 * @return void
	 */
	public static function register() {
		add_shortcode( 'listgate_listings', array( __CLASS__, 'listings' ) );
		add_shortcode( 'listgate_listing', array( __CLASS__, 'listing' ) );
		add_shortcode( 'listgate_featured', array( __CLASS__, 'featured' ) );
		add_action( 'wp_enqueue_scripts', array( __CLASS__, 'enqueue_early' ) );
	}

	/**
	 * Enqueues the stylesheet in the head when the page's content uses a
	 * shortcode; other shortcode uses (widgets, templates) enqueue it late.
	 *
	 * @return void
	 */
	public static function enqueue_early() {
		wp_register_style( 'listgate', plugins_url( 'assets/listgate.css', LISTGATE_FILE ), array(), LISTGATE_VERSION );
		$post = get_post();
		if ( ! is_singular() || ! $post instanceof WP_Post ) {
			return;
		}
		foreach ( array( 'listgate_listings', 'listgate_listing', 'listgate_featured' ) as $tag ) {
			if ( has_shortcode( $post->post_content, $tag ) ) {
				wp_enqueue_style( 'listgate' );
				return;
			}
		}
	}

	/**
	 * Enqueues the stylesheet.
	 *
	 * @return void
	 */
	private static function enqueue() {
		if ( ! wp_style_is( 'listgate', 'registered' ) ) {
			wp_register_style( 'listgate', plugins_url( 'assets/listgate.css', LISTGATE_FILE ), array(), LISTGATE_VERSION );
		}
		wp_enqueue_style( 'listgate' );
	}

	/**
	 * What a shortcode shows when the site is not connected: a hint for
	 * administrators, nothing for visitors.
	 *
	 * @return string
	 */
	private static function not_connected() {
		if ( ! listgate_user_is_admin() ) {
			return '';
		}
		return listgate_render( 'admin-note', array( 'message' => __( 'Listgate is not connected, so no listings are shown. Connect it under Settings → Listgate. (Only administrators see this note.)', 'listgate' ) ) );
	}

	/**
	 * What a shortcode shows when the data cannot be read.
	 *
	 * @param array $result See Listgate_Client::get().
	 * @return string
	 */
	private static function failure( $result ) {
		$html = listgate_render( 'unavailable', array() );
		if ( 'unauthorized' === $result['error'] && listgate_user_is_admin() ) {
			$html .= listgate_render( 'admin-note', array( 'message' => __( 'Listgate refused this site\'s key (it may have been revoked or disconnected in the dashboard). Disconnect and connect again under Settings → Listgate. (Only administrators see this note.)', 'listgate' ) ) );
		}
		return $html;
	}

	/**
	 * [listgate_listings per_page="12"]: filters, a grid and pagination; the
	 * single view when the query has lg_listing.
	 *
	 * @param array|string $atts The shortcode's attributes.
	 * @return string
	 */
	public static function listings( $atts ) {
		$atts = shortcode_atts( array( 'per_page' => 12 ), $atts, 'listgate_listings' );
		self::enqueue();
		if ( ! listgate_is_connected() ) {
			return self::not_connected();
		}
		$ref = listgate_query_var( 'lg_listing' );
		if ( '' !== $ref ) {
			return self::single( $ref, true );
		}

		$per_page = min( 100, max( 1, absint( $atts['per_page'] ) ) );
		$page     = listgate_query_var( 'lg_page' );
		$page     = ctype_digit( $page ) ? max( 1, min( 10000, (int) $page ) ) : 1;
		$filters  = self::current_filters();
		$query    = array(
			'page'     => $page,
			'per_page' => $per_page,
		);
		foreach ( self::FILTERS as $var => $param ) {
			if ( '' !== $filters[ $var ] ) {
				$query[ $param ] = $filters[ $var ];
			}
		}

		$result = Listgate_Client::get( Listgate_Client::site_path( 'listings' ), $query );
		if ( '' !== $result['error'] && 'invalid' !== $result['error'] ) {
			return self::failure( $result );
		}
		$fields = Listgate_Client::get( Listgate_Client::site_path( 'fields' ), array( 'per_page' => 100 ) );
		$html  = '<div class="listgate listgate-listings">';
		$html .= listgate_render( 'filters', self::filter_args( $filters, '' === $fields['error'] ? $fields['data'] : null ) );
		if ( 'invalid' === $result['error'] ) {
			$html .= listgate_render( 'empty', array( 'message' => __( 'These search filters could not be used. Please change them and search again.', 'listgate' ) ) );
		} else {
			$listings = self::listings_of( $result['data'] );
			if ( empty( $listings ) ) {
				$html .= listgate_render( 'empty', array( 'message' => __( 'No listings match your search.', 'listgate' ) ) );
			} else {
				$html .= listgate_render(
					'grid',
					array(
						'listings'  => $listings,
						'class'     => 'listgate-grid',
						'link_base' => listgate_current_url(),
					)
				);
				$html .= listgate_render( 'pagination', self::pagination_args( $result['data'] ) );
			}
		}
		$html .= '</div>';
		return $html;
	}

	/**
	 * [listgate_listing ref="123"]: one listing with its enquiry form; without
	 * ref, the lg_listing query parameter names it.
	 *
	 * @param array|string $atts The shortcode's attributes.
	 * @return string
	 */
	public static function listing( $atts ) {
		$atts = shortcode_atts( array( 'ref' => '' ), $atts, 'listgate_listing' );
		self::enqueue();
		if ( ! listgate_is_connected() ) {
			return self::not_connected();
		}
		$ref = trim( (string) $atts['ref'] );
		$from_query = false;
		if ( '' === $ref ) {
			$ref        = listgate_query_var( 'lg_listing' );
			$from_query = true;
		}
		if ( '' === $ref ) {
			if ( listgate_user_is_admin() ) {
				return listgate_render( 'admin-note', array( 'message' => __( '[listgate_listing] needs a ref attribute or an lg_listing query parameter. (Only administrators see this note.)', 'listgate' ) ) );
			}
			return '';
		}
		return self::single( $ref, $from_query );
	}

	/**
	 * [listgate_featured count="4" page=""]: featured listings. Their links
	 * lead to the page given (a page ID, slug or URL that shows
	 * [listgate_listings] or [listgate_listing]), by default the current page.
	 *
	 * @param array|string $atts The shortcode's attributes.
	 * @return string
	 */
	public static function featured( $atts ) {
		$atts = shortcode_atts(
			array(
				'count' => 4,
				'page'  => '',
			),
			$atts,
			'listgate_featured'
		);
		self::enqueue();
		if ( ! listgate_is_connected() ) {
			return self::not_connected();
		}
		// A featured card links to lg_listing on this page: when nothing else
		// on the page shows that listing, this shortcode does.
		$ref = listgate_query_var( 'lg_listing' );
		if ( '' !== $ref && '' === trim( (string) $atts['page'] ) && ! self::page_shows_listing() ) {
			return self::single( $ref, true );
		}
		$count  = min( 100, max( 1, absint( $atts['count'] ) ) );
		$result = Listgate_Client::get( Listgate_Client::site_path( 'listings/featured' ), array( 'per_page' => $count ) );
		if ( '' !== $result['error'] ) {
			return self::failure( $result );
		}
		$listings = array_slice( self::listings_of( $result['data'] ), 0, $count );
		$html     = '';
		if ( empty( $listings ) && listgate_user_is_admin() ) {
			$html = listgate_render( 'admin-note', array( 'message' => __( 'No listing is featured yet: feature listings in the Listgate dashboard. (Only administrators see this note.)', 'listgate' ) ) );
		}
		return $html . listgate_render(
			'grid',
			array(
				'listings'  => $listings,
				'class'     => 'listgate-grid listgate-featured',
				'link_base' => self::page_url( (string) $atts['page'] ),
			)
		);
	}

	/**
	 * Whether the current page's content has a shortcode that shows the
	 * listing named by lg_listing.
	 *
	 * @return bool
	 */
	private static function page_shows_listing() {
		$post = get_queried_object();
		if ( ! $post instanceof WP_Post ) {
			return false;
		}
		return has_shortcode( $post->post_content, 'listgate_listings' ) || has_shortcode( $post->post_content, 'listgate_listing' );
	}

	/**
	 * The single view of a listing.
	 *
	 * @param string $ref        The listing_ref, listing_id or AGENCYID:UNIQUEID.
	 * @param bool   $from_query Whether the ref came from lg_listing (a back link to the grid is shown).
	 * @return string
	 */
	private static function single( $ref, $from_query ) {
		$back = $from_query ? listgate_current_url( array( 'lg_listing' ) ) : '';
		if ( ! preg_match( '/^[A-Za-z0-9][A-Za-z0-9:_.\-]{0,199}$/', $ref ) ) {
			return listgate_render(
				'empty',
				array(
					'message'  => __( 'This listing is no longer available.', 'listgate' ),
					'back_url' => $back,
				)
			);
		}
		$result = Listgate_Client::get( Listgate_Client::site_path( 'listings/' . rawurlencode( $ref ) ) );
		if ( 'not_found' === $result['error'] || 'invalid' === $result['error'] ) {
			return listgate_render(
				'empty',
				array(
					'message'  => __( 'This listing is no longer available.', 'listgate' ),
					'back_url' => $back,
				)
			);
		}
		if ( '' !== $result['error'] || ! is_array( $result['data'] ) || ! isset( $result['data']['listing_ref'] ) ) {
			return self::failure( $result );
		}
		$listing = $result['data'];
		return listgate_render(
			'listing',
			array(
				'listing'  => $listing,
				'back_url' => $back,
				'enquiry'  => Listgate_Enquiry::form_args( $listing ),
			)
		);
	}

	/**
	 * The listings of a collection, tombstones left out.
	 *
	 * @param mixed $data The collection.
	 * @return array[]
	 */
	private static function listings_of( $data ) {
		$out = array();
		if ( ! is_array( $data ) || ! isset( $data['data'] ) || ! is_array( $data['data'] ) ) {
			return $out;
		}
		foreach ( $data['data'] as $listing ) {
			if ( is_array( $listing ) && isset( $listing['listing_ref'] ) && array_key_exists( 'address', $listing ) ) {
				$out[] = $listing;
			}
		}
		return $out;
	}

	/**
	 * The visitor's filters from the query string, checked.
	 *
	 * @return array lg_* => value ("" when unset or unusable).
	 */
	private static function current_filters() {
		$type = listgate_query_var( 'lg_type' );
		if ( ! in_array( $type, self::TYPES, true ) ) {
			$type = '';
		}
		$suburb = listgate_query_var( 'lg_suburb' );
		if ( strlen( $suburb ) > 100 ) {
			$suburb = '';
		}
		$min      = self::amount( listgate_query_var( 'lg_price_min' ) );
		$max      = self::amount( listgate_query_var( 'lg_price_max' ) );
		$bedrooms = listgate_query_var( 'lg_bedrooms' );
		$bedrooms = ctype_digit( $bedrooms ) ? (int) $bedrooms : 0;
		if ( '' !== $min && '' !== $max && (int) $min > (int) $max ) {
			list( $min, $max ) = array( $max, $min );
		}
		return array(
			'lg_type'      => $type,
			'lg_suburb'    => $suburb,
			'lg_price_min' => $min,
			'lg_price_max' => $max,
			'lg_bedrooms'  => $bedrooms > 0 && $bedrooms <= 100 ? (string) $bedrooms : '',
		);
	}

	/**
	 * A price typed by a visitor ("750,000", "$1.2m" is not understood) as
	 * whole dollars.
	 *
	 * @param string $raw The input.
	 * @return string Digits, or "".
	 */
	private static function amount( $raw ) {
		$raw = str_replace( array( ',', '$', ' ' ), '', $raw );
		if ( '' === $raw || ! is_numeric( $raw ) || (float) $raw < 0 || (float) $raw > 1e12 ) {
			return '';
		}
		return (string) (int) floor( (float) $raw );
	}

	/**
	 * The variables of the filters template.
	 *
	 * @param array      $filters The current filters.
	 * @param array|null $fields  The /fields collection, or null when it could not be read.
	 * @return array
	 */
	private static function filter_args( $filters, $fields ) {
		$defs = array();
		if ( is_array( $fields ) && isset( $fields['data'] ) && is_array( $fields['data'] ) ) {
			foreach ( $fields['data'] as $field ) {
				if ( is_array( $field ) && isset( $field['name'] ) && is_string( $field['name'] ) ) {
					$defs[ $field['name'] ] = $field;
				}
			}
		}

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

		$max_beds = 5;
		if ( isset( $defs['bedrooms']['max'] ) && is_numeric( $defs['bedrooms']['max'] ) ) {
			$max_beds = max( 1, min( 10, (int) $defs['bedrooms']['max'] ) );
		}
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

	/**
	 * The variables of the pagination template.
	 *
	 * @param array $data The collection.
	 * @return array "pages": each with "number" (0 for a gap), "url", "current"; "prev" and "next" URLs ("" for none).
	 */
	private static function pagination_args( $data ) {
		$page  = isset( $data['meta']['page'] ) ? max( 1, (int) $data['meta']['page'] ) : 1;
		$total = isset( $data['meta']['total_pages'] ) ? max( 1, (int) $data['meta']['total_pages'] ) : 1;
		$args  = array(
			'pages' => array(),
			'prev'  => '',
			'next'  => '',
			'page'  => $page,
			'total' => $total,
		);
		if ( $total <= 1 ) {
			return $args;
		}
		$last = 0;
		for ( $n = 1; $n <= $total; $n++ ) {
			if ( 1 !== $n && $total !== $n && abs( $n - $page ) > 2 ) {
				continue;
			}
			if ( $last && $n - $last > 1 ) {
				$args['pages'][] = array(
					'number'  => 0,
					'url'     => '',
					'current' => false,
				);
			}
			$args['pages'][] = array(
				'number'  => $n,
				'url'     => self::page_link( $n ),
				'current' => $n === $page,
			);
			$last = $n;
		}
		if ( $page > 1 ) {
			$args['prev'] = self::page_link( $page - 1 );
		}
		if ( $page < $total ) {
			$args['next'] = self::page_link( $page + 1 );
		}
		return $args;
	}

	/**
	 * The address of a page of the grid, filters kept.
	 *
	 * @param int $n The page.
	 * @return string
	 */
	private static function page_link( $n ) {
		$base = listgate_current_url( array( 'lg_listing', 'lg_page' ) );
		return 1 === $n ? $base : add_query_arg( 'lg_page', $n, $base );
	}

	/**
	 * The address cards link to: a page (ID, slug or URL), else the current page.
	 *
	 * @param string $page The shortcode's page attribute.
	 * @return string
	 */
	private static function page_url( $page ) {
		$page = trim( $page );
		if ( '' === $page ) {
			return listgate_current_url( array( 'lg_listing', 'lg_page' ) );
		}
		if ( ctype_digit( $page ) ) {
			$url = get_permalink( (int) $page );
			return $url ? $url : listgate_current_url( array( 'lg_listing', 'lg_page' ) );
		}
		if ( preg_match( '#^(https?:)?/#i', $page ) ) {
			return esc_url_raw( $page );
		}
		$post = get_page_by_path( sanitize_title_for_query( $page ) );
		return $post ? get_permalink( $post ) : listgate_current_url( array( 'lg_listing', 'lg_page' ) );
	}
}
