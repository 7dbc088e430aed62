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
	 * The highest grid page a visitor can ask for; a higher lg_page shows
	 * the first page.
	 */
	const MAX_PAGE = 500;

	/**
	 * What an lg_listing value must look like: a listing_ref (digits), a
	 * listing_id, or AGENCYID:UNIQUEID, each part of letters, digits, "_"
	 * and "-", at most 64 characters. Anything else is not sent to
	 * Listgate. (The plugin's own links use the listing_ref.)
	 */
	const LISTING_PARAM = '/^[A-Za-z0-9_-]{1,64}(?::[A-Za-z0-9_-]{1,64})?$/';

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
		$ref = self::listing_param();
		if ( '' !== $ref ) {
			return self::single( $ref, true );
		}

		// The filters are checked against the site's /fields first: a value
		// it does not list is ignored, so made-up values cost no API call
		// and leave nothing in the cache.
		$fields = Listgate_Client::get( Listgate_Client::site_path( 'fields' ), array( 'per_page' => 100 ) );
		if ( 'unauthorized' === $fields['error'] ) {
			return self::failure( $fields );
		}
		$defs          = '' === $fields['error'] ? Listgate_Filters::field_defs( $fields['data'] ) : null;
		$filters       = Listgate_Filters::from_query( $defs );
		$query         = Listgate_Filters::api_query( $filters, min( 100, max( 1, absint( $atts['per_page'] ) ) ) );
		$path          = Listgate_Client::site_path( 'listings' );
		$query['page'] = self::page_to_show( $path, $query );

		$result = Listgate_Client::get( $path, $query );
		if ( '' !== $result['error'] && 'invalid' !== $result['error'] ) {
			return self::failure( $result );
		}
		$html  = '<div class="listgate listgate-listings">';
		$html .= listgate_render( 'filters', Listgate_Filters::form_args( $filters, $defs ) );
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
		$ref        = trim( (string) $atts['ref'] );
		$from_query = false;
		if ( '' === $ref ) {
			$ref        = self::listing_param();
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
		$ref = self::listing_param();
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
	 * The lg_listing query parameter as the visitor sent it (unslashed, not
	 * sanitised: single() checks it against LISTING_PARAM).
	 *
	 * @return string "" when absent or empty.
	 */
	private static function listing_param() {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- read-only visitor parameter.
		if ( ! isset( $_GET['lg_listing'] ) || ! is_string( $_GET['lg_listing'] ) ) {
			return '';
		}
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended, WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- checked against LISTING_PARAM before any use.
		return trim( wp_unslash( $_GET['lg_listing'] ) );
	}

	/**
	 * The single view of a listing.
	 *
	 * @param string $ref        The listing_ref, listing_id or AGENCYID:UNIQUEID.
	 * @param bool   $from_query Whether the ref came from lg_listing (checked against LISTING_PARAM; a back link to the grid is shown).
	 * @return string
	 */
	private static function single( $ref, $from_query ) {
		$back  = $from_query ? listgate_current_url( array( 'lg_listing' ) ) : '';
		$valid = $from_query ? (bool) preg_match( self::LISTING_PARAM, $ref ) : (bool) preg_match( '/^[A-Za-z0-9][A-Za-z0-9:_.\-]{0,199}$/', $ref );
		if ( ! $valid ) {
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
		) . Listgate_Views::markup( $listing['listing_ref'] );
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
	 * The page of the grid to show: lg_page, at most MAX_PAGE (higher or
	 * unreadable: 1) and at most the last page of the answer for page 1 of
	 * the same filters. When that answer is not cached, page 1 is read
	 * first (it is the page most visitors see anyway), so a page past the
	 * end costs no more than reading page 1 and the last page.
	 *
	 * @param string $path  The listings path.
	 * @param array  $query The query for page 1.
	 * @return int
	 */
	private static function page_to_show( $path, $query ) {
		$raw = listgate_query_var( 'lg_page' );
		if ( '' === $raw || ! ctype_digit( $raw ) || strlen( $raw ) > 4 ) {
			return 1;
		}
		$page = (int) $raw;
		if ( $page <= 1 || $page > self::MAX_PAGE ) {
			return 1;
		}
		$first = Listgate_Client::peek( $path, $query );
		if ( null === $first ) {
			$result = Listgate_Client::get( $path, $query );
			$first  = '' === $result['error'] ? $result['data'] : null;
		}
		// A total that is a lower bound (total_exact false, on a site with
		// thousands of matches) does not bound the page.
		if ( is_array( $first ) && isset( $first['meta']['total_pages'] ) && is_numeric( $first['meta']['total_pages'] )
			&& self::total_exact( $first ) ) {
			$page = min( $page, max( 1, (int) $first['meta']['total_pages'] ) );
		}
		return $page;
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
		if ( $total <= 1 && self::total_exact( $data ) ) {
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
		if ( $page < $total || ( ! self::total_exact( $data ) && $page < self::MAX_PAGE ) ) {
			$args['next'] = self::page_link( $page + 1 );
		}
		return $args;
	}

	/**
	 * Whether a collection's total is exact: false when the API counted its
	 * matches only up to a bound past the page (meta.total_exact), so that
	 * there may be pages past total_pages.
	 *
	 * @param array $data The collection.
	 * @return bool
	 */
	private static function total_exact( $data ) {
		return ! isset( $data['meta']['total_exact'] ) || false !== $data['meta']['total_exact'];
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
