<?php
/**
 * Listing views: the view beacon of single listing pages and the
 * dashboard widget of the site's top listings.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Counts listing views for the agency's vendor reports, and shows the
 * listings people look at most.
 *
 * A single listing view carries a few lines of inline script that, once
 * the page has loaded and the browser is idle, send one beacon to Listgate
 * (navigator.sendBeacon, a text/plain JSON body: no preflight, nothing
 * waits for it): the listing's reference and the page's path, keyed by the
 * site's beacon id, a public id that can do nothing but count views.
 * Browsers without JavaScript load a 1×1 pixel from a <noscript> instead.
 * No cookie is set and nothing about the visitor is stored, here or in
 * Listgate (which counts unique visitors per day by a hash under a salt it
 * never stores). Nothing is sent from admin pages, previews, the
 * customizer, feeds, REST or AJAX renders, nor for users who can edit
 * posts (the agency's own staff; filter listgate_count_view). The switch
 * on the settings page (option listgate_views_enabled, on by default)
 * turns it off: then the pages carry no beacon markup at all.
 */
class Listgate_Views {

	/**
	 * The option of the switch: "1" (the default) counts views, "0" does not.
	 */
	const ENABLED_OPTION = 'listgate_views_enabled';

	/**
	 * The option of the site's beacon id (delivered by pairing, or pasted
	 * on the settings page). Public by design: it is in every listing page.
	 */
	const BEACON_OPTION = 'listgate_beacon_id';

	/**
	 * What a beacon id looks like: a Listgate key.
	 */
	const BEACON_PATTERN = '/^lgk_[A-Za-z0-9]{36}$/';

	/**
	 * How many listings the widget shows.
	 */
	const TOP_LIMIT = 10;

	/**
	 * The longest page path a beacon carries, in bytes (Listgate's limit).
	 */
	const MAX_PATH = 512;

	/**
	 * Listings whose beacon this PHP request has printed already.
	 *
	 * @var array<int, bool>
	 */
	private static $sent = array();

	/**
	 * Registers the dashboard widget.
	 *
	 * @return void
	 */
	public static function register() {
		add_action( 'wp_dashboard_setup', array( __CLASS__, 'dashboard_setup' ) );
	}

	/**
	 * Whether counting views is switched on.
	 *
	 * @return bool
	 */
	public static function enabled() {
		return '0' !== (string) get_option( self::ENABLED_OPTION, '1' );
	}

	/**
	 * The site's beacon id, "" when none is set or it is malformed.
	 *
	 * @return string
	 */
	public static function beacon_id() {
		$id = (string) get_option( self::BEACON_OPTION, '' );
		return preg_match( self::BEACON_PATTERN, $id ) ? $id : '';
	}

	/**
	 * Stores a beacon id; "" forgets it.
	 *
	 * @param string $id The id.
	 * @return bool Whether it was stored (false: malformed, nothing changed).
	 */
	public static function set_beacon_id( $id ) {
		$id = trim( (string) $id );
		if ( '' === $id ) {
			delete_option( self::BEACON_OPTION );
			return true;
		}
		if ( ! preg_match( self::BEACON_PATTERN, $id ) ) {
			return false;
		}
		update_option( self::BEACON_OPTION, $id, false );
		return true;
	}

	/**
	 * Whether this request's view of a listing is counted: the switch is
	 * on, the site is connected with a beacon id, the page is a public
	 * page a visitor sees, and the user is not one of the site's editors.
	 *
	 * @param int $ref The listing_ref.
	 * @return bool
	 */
	public static function counts( $ref ) {
		if ( ! self::enabled() || '' === self::beacon_id() || ! listgate_is_connected() || $ref < 1 ) {
			return false;
		}
		if ( is_admin() || wp_doing_ajax() || wp_doing_cron() || ( defined( 'REST_REQUEST' ) && REST_REQUEST )
			|| is_preview() || is_customize_preview() || is_feed() || is_embed() ) {
			return false;
		}
		$count = ! current_user_can( 'edit_posts' );
		/**
		 * Filters whether a view of a listing page is counted. By default
		 * visitors' views are, and those of users who can edit posts (the
		 * agency's own staff) are not.
		 *
		 * @param bool $count Whether the view is counted.
		 * @param int  $ref   The listing_ref.
		 */
		return (bool) apply_filters( 'listgate_count_view', $count, $ref );
	}

	/**
	 * The beacon markup of a listing's page: the inline script and the
	 * <noscript> pixel, once per listing and request; "" when the view is
	 * not counted (see counts()).
	 *
	 * @param mixed $ref The listing_ref (the API's integer).
	 * @return string
	 */
	public static function markup( $ref ) {
		if ( ! is_int( $ref ) && ! ( is_string( $ref ) && ctype_digit( $ref ) ) ) {
			return '';
		}
		$ref = (int) $ref;
		if ( isset( self::$sent[ $ref ] ) || ! self::counts( $ref ) ) {
			return '';
		}
		self::$sent[ $ref ] = true;

		$base   = listgate_api_url( 'sites/' . rawurlencode( (string) get_option( 'listgate_site_id', '' ) ) );
		$beacon = self::beacon_id();
		$config = array(
			'url'     => $base . '/views?k=' . rawurlencode( $beacon ),
			'pixel'   => $base . '/views.gif?k=' . rawurlencode( $beacon ) . '&listing=' . $ref,
			'listing' => $ref,
		);
		$json   = wp_json_encode( $config, JSON_HEX_TAG | JSON_HEX_AMP | JSON_HEX_APOS | JSON_HEX_QUOT | JSON_UNESCAPED_SLASHES );
		// Runs after the load event, when the browser is idle: it delays
		// nothing the page loads or draws, and fetches no file.
		$script = '(function(){var c=' . $json . ',w=window,d=document;'
			. 'function send(){var b=JSON.stringify({listing:c.listing,path:location.pathname.slice(0,' . self::MAX_PATH . ')});'
			. 'try{if(navigator.sendBeacon&&navigator.sendBeacon(c.url,b))return;}catch(e){}'
			. '(new Image()).src=c.pixel+"&path="+encodeURIComponent(location.pathname.slice(0,' . self::MAX_PATH . '));}'
			. 'function idle(){w.requestIdleCallback?w.requestIdleCallback(send,{timeout:3000}):setTimeout(send,0);}'
			. 'd.readyState==="complete"?idle():w.addEventListener("load",idle,{once:true});})();';

		$pixel = $config['pixel'];
		$path  = self::request_path();
		if ( '' !== $path ) {
			$pixel .= '&path=' . rawurlencode( $path );
		}
		return wp_get_inline_script_tag( $script, array( 'id' => 'listgate-view-' . $ref ) )
			. '<noscript><img class="listgate-view-pixel" src="' . esc_url( $pixel ) . '" alt="" width="1" height="1" hidden></noscript>';
	}

	/**
	 * The current request's path, "" when longer than MAX_PATH.
	 *
	 * @return string
	 */
	private static function request_path() {
		$uri  = isset( $_SERVER['REQUEST_URI'] ) ? (string) wp_unslash( $_SERVER['REQUEST_URI'] ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- only its path is used, URL-encoded.
		$path = (string) wp_parse_url( $uri, PHP_URL_PATH );
		return strlen( $path ) > self::MAX_PATH ? '' : $path;
	}

	/**
	 * Adds the widget to the dashboard of users who manage the plugin.
	 *
	 * @return void
	 */
	public static function dashboard_setup() {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		wp_add_dashboard_widget( 'listgate_top_listings', __( 'Listgate: top listings this week', 'listgate' ), array( __CLASS__, 'render_widget' ) );
	}

	/**
	 * The site's top listings by views over the last seven days (from six
	 * days before today in WordPress's time zone), read through the
	 * plugin's cache like its other reads.
	 *
	 * @return array See Listgate_Client::get().
	 */
	public static function top_listings() {
		return Listgate_Client::get(
			Listgate_Client::site_path( 'stats/listings' ),
			array(
				'sort'  => '-views',
				'limit' => self::TOP_LIMIT,
				'from'  => wp_date( 'Y-m-d', time() - 6 * DAY_IN_SECONDS ),
			)
		);
	}

	/**
	 * Prints the widget.
	 *
	 * @return void
	 */
	public static function render_widget() {
		if ( ! listgate_is_connected() ) {
			self::render_top_listings( array( 'error' => 'not_connected' ) );
			return;
		}
		self::render_top_listings( self::top_listings() );
	}

	/**
	 * Prints the top listings of an answer of Listgate_Client::get() for
	 * stats/listings: a table of the listings, or why there is none.
	 *
	 * @param array $result See Listgate_Client::get().
	 * @return void
	 */
	public static function render_top_listings( $result ) {
		$error = isset( $result['error'] ) ? (string) $result['error'] : 'unavailable';
		?>
		<div class="listgate-top-listings">
		<?php
		if ( ! self::enabled() ) {
			?>
			<p class="listgate-views-off"><?php esc_html_e( 'Counting listing views is switched off (Settings → Listgate): new views are not counted.', 'listgate' ); ?></p>
			<?php
		} elseif ( listgate_is_connected() && '' === self::beacon_id() ) {
			?>
			<p class="listgate-views-off"><?php esc_html_e( 'This site has no beacon id, so listing views are not counted: connect again, or enter it under Settings → Listgate.', 'listgate' ); ?></p>
			<?php
		}
		if ( 'not_connected' === $error ) {
			?>
			<p class="listgate-top-error"><?php esc_html_e( 'Listgate is not connected. Connect it under Settings → Listgate.', 'listgate' ); ?></p>
			</div>
			<?php
			return;
		}
		if ( 'unauthorized' === $error ) {
			?>
			<p class="listgate-top-error"><?php esc_html_e( 'Listgate refused this site\'s key for its statistics (it may have been revoked, or lack stats:read): disconnect and connect again under Settings → Listgate.', 'listgate' ); ?></p>
			</div>
			<?php
			return;
		}
		$data = isset( $result['data'] ) && is_array( $result['data'] ) ? $result['data'] : null;
		if ( '' !== $error || null === $data || ! isset( $data['data'] ) || ! is_array( $data['data'] ) ) {
			?>
			<p class="listgate-top-error"><?php esc_html_e( 'Listgate\'s statistics cannot be read right now. Try again in a moment.', 'listgate' ); ?></p>
			</div>
			<?php
			return;
		}
		$meta = isset( $data['meta'] ) && is_array( $data['meta'] ) ? $data['meta'] : array();
		$from = isset( $meta['from'] ) && is_string( $meta['from'] ) ? $meta['from'] : '';
		$to   = isset( $meta['to'] ) && is_string( $meta['to'] ) ? $meta['to'] : '';
		$rows = array();
		foreach ( $data['data'] as $row ) {
			if ( is_array( $row ) && isset( $row['listing_ref'] ) && is_numeric( $row['listing_ref'] ) ) {
				$rows[] = $row;
			}
		}
		if ( empty( $rows ) ) {
			?>
			<p class="listgate-top-empty"><?php esc_html_e( 'No listing has been viewed in the last seven days.', 'listgate' ); ?></p>
			</div>
			<?php
			return;
		}
		?>
		<table class="widefat striped listgate-top-table">
			<?php if ( '' !== $from && '' !== $to ) : ?>
				<caption class="listgate-top-period">
					<?php
					/* translators: 1: first day, 2: last day (YYYY-MM-DD). */
					echo esc_html( sprintf( __( 'Views from %1$s to %2$s', 'listgate' ), $from, $to ) );
					?>
				</caption>
			<?php endif; ?>
			<thead>
				<tr>
					<th scope="col"><?php esc_html_e( 'Listing', 'listgate' ); ?></th>
					<th scope="col" class="num"><?php esc_html_e( 'Views', 'listgate' ); ?></th>
					<th scope="col" class="num"><?php esc_html_e( 'Visitors', 'listgate' ); ?></th>
					<th scope="col" class="num"><?php esc_html_e( 'Enquiries', 'listgate' ); ?></th>
				</tr>
			</thead>
			<tbody>
				<?php foreach ( $rows as $row ) : ?>
					<?php
					$listgate_ref      = (string) (int) $row['listing_ref'];
					$listgate_headline = isset( $row['headline'] ) && is_string( $row['headline'] ) && '' !== trim( $row['headline'] ) ? $row['headline'] : '';
					/* translators: %s: the listing's reference. */
					$listgate_name = '' !== $listgate_headline ? $listgate_headline : sprintf( __( 'Listing %s', 'listgate' ), $listgate_ref );
					?>
					<tr class="listgate-top-row" data-listing-ref="<?php echo esc_attr( $listgate_ref ); ?>">
						<td class="listgate-top-name"><?php echo esc_html( $listgate_name ); ?> <span class="listgate-top-ref">#<?php echo esc_html( $listgate_ref ); ?></span></td>
						<td class="num listgate-top-views"><?php echo esc_html( number_format_i18n( isset( $row['views'] ) ? (int) $row['views'] : 0 ) ); ?></td>
						<td class="num listgate-top-visitors"><?php echo esc_html( number_format_i18n( isset( $row['unique_visitors'] ) ? (int) $row['unique_visitors'] : 0 ) ); ?></td>
						<td class="num listgate-top-leads"><?php echo esc_html( number_format_i18n( isset( $row['leads'] ) ? (int) $row['leads'] : 0 ) ); ?></td>
					</tr>
				<?php endforeach; ?>
			</tbody>
		</table>
		</div>
		<?php
	}
}
