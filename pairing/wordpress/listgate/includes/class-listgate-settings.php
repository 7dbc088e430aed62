<?php
/**
 * The settings page: Settings → Listgate.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * The settings page: the Listgate address, the lead key, the connection
 * (pairing) and the cache.
 */
class Listgate_Settings {

	/**
	 * The page's hook suffix, set when the menu is registered.
	 *
	 * @var string
	 */
	private static $hook = '';

	/**
	 * Registers the admin hooks.
	 *
	 * @return void
	 */
	public static function register() {
		add_action( 'admin_menu', array( __CLASS__, 'menu' ) );
		add_action( 'admin_enqueue_scripts', array( __CLASS__, 'enqueue' ) );
		add_action( 'admin_post_listgate_save_settings', array( __CLASS__, 'handle_save' ) );
		add_action( 'admin_post_listgate_clear_cache', array( __CLASS__, 'handle_clear_cache' ) );
		add_filter( 'plugin_action_links_' . plugin_basename( LISTGATE_FILE ), array( __CLASS__, 'action_links' ) );
	}

	/**
	 * Adds Settings → Listgate.
	 *
	 * @return void
	 */
	public static function menu() {
		self::$hook = (string) add_options_page(
			__( 'Listgate', 'listgate' ),
			__( 'Listgate', 'listgate' ),
			'manage_options',
			'listgate',
			array( __CLASS__, 'render' )
		);
	}

	/**
	 * Adds a Settings link to the plugin's row on the Plugins page.
	 *
	 * @param string[] $links The row's links.
	 * @return string[]
	 */
	public static function action_links( $links ) {
		array_unshift( $links, '<a href="' . esc_url( listgate_settings_url() ) . '">' . esc_html__( 'Settings', 'listgate' ) . '</a>' );
		return $links;
	}

	/**
	 * Loads the pairing script on the settings page only.
	 *
	 * @param string $hook The current admin page's hook suffix.
	 * @return void
	 */
	public static function enqueue( $hook ) {
		if ( '' === self::$hook || $hook !== self::$hook ) {
			return;
		}
		wp_enqueue_script( 'listgate-admin', plugins_url( 'assets/listgate-admin.js', LISTGATE_FILE ), array(), LISTGATE_VERSION, true );
		wp_localize_script(
			'listgate-admin',
			'listgateAdmin',
			array(
				'ajaxUrl' => admin_url( 'admin-ajax.php' ),
				'nonce'   => wp_create_nonce( 'listgate_pairing_poll' ),
				'i18n'    => array(
					'waiting'   => __( 'Waiting for approval…', 'listgate' ),
					'connected' => __( 'Connected. Reloading…', 'listgate' ),
					'failed'    => __( 'Checking the pairing failed. Reload the page to try again.', 'listgate' ),
				),
			)
		);
	}

	/**
	 * Dies unless the user may manage the plugin and the nonce is good.
	 *
	 * @param string $action The nonce action.
	 * @return void
	 */
	private static function guard( $action ) {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to manage Listgate.', 'listgate' ), '', array( 'response' => 403 ) );
		}
		check_admin_referer( $action );
	}

	/**
	 * Saves the address and the lead key. admin-post action listgate_save_settings.
	 *
	 * @return void
	 */
	public static function handle_save() {
		self::guard( 'listgate_save_settings' );

		$raw_base = isset( $_POST['listgate_base_url'] ) ? sanitize_text_field( wp_unslash( $_POST['listgate_base_url'] ) ) : '';
		$base     = listgate_normalize_base_url( $raw_base );
		$saved    = true;
		if ( '' !== $raw_base && '' === $base ) {
			$saved = false;
			listgate_queue_notice( 'error', __( 'The Listgate address must be an http or https URL, e.g. https://api.listgate.example. It was not changed.', 'listgate' ) );
		} elseif ( $base !== listgate_base_url() ) {
			$was_connected = listgate_is_connected();
			update_option( 'listgate_base_url', $base );
			delete_transient( Listgate_Pairing::TRANSIENT );
			Listgate_Client::flush_cache();
			if ( $was_connected ) {
				listgate_queue_notice( 'warning', __( 'The Listgate address changed while this site is connected. If it is a different Listgate, disconnect and connect again: the key belongs to the Listgate that issued it.', 'listgate' ) );
			}
		}

		if ( ! empty( $_POST['listgate_lead_key_clear'] ) ) {
			delete_option( 'listgate_lead_key' );
		} else {
			$lead_key = isset( $_POST['listgate_lead_key'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['listgate_lead_key'] ) ) ) : '';
			if ( '' !== $lead_key ) {
				if ( ! preg_match( '/^lgk_[A-Za-z0-9]{36}$/', $lead_key ) ) {
					$saved = false;
					listgate_queue_notice( 'error', __( 'That is not a Listgate API key (they start with lgk_ and are 40 characters long). The lead key was not changed.', 'listgate' ) );
				} else {
					listgate_update_private_option( 'listgate_lead_key', $lead_key );
					self::check_lead_key( $lead_key );
				}
			}
		}

		// The form always has the views switch: unticked, it is not posted.
		update_option( Listgate_Views::ENABLED_OPTION, empty( $_POST['listgate_views_enabled'] ) ? '0' : '1' );
		$beacon = isset( $_POST['listgate_beacon_id'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['listgate_beacon_id'] ) ) ) : '';
		if ( $beacon !== Listgate_Views::beacon_id() ) {
			$problem = self::check_beacon_id( $beacon );
			if ( '' !== $problem ) {
				$saved = false;
				listgate_queue_notice( 'error', $problem . ' ' . __( 'The beacon id was not changed.', 'listgate' ) );
			} else {
				Listgate_Views::set_beacon_id( $beacon );
			}
		}

		if ( $saved ) {
			listgate_queue_notice( 'success', __( 'Settings saved.', 'listgate' ) );
		}
		wp_safe_redirect( listgate_settings_url() );
		exit;
	}

	/**
	 * Tells the administrator whether a lead key can submit leads. It sends
	 * an empty lead, which Listgate refuses (422) without storing anything
	 * when the key is good, and answers 401 or 403 when it is not.
	 *
	 * @param string $key The lead key.
	 * @return void
	 */
	private static function check_lead_key( $key ) {
		if ( '' === listgate_base_url() ) {
			return;
		}
		$response = Listgate_Client::request(
			'POST',
			'leads',
			array(
				'key'  => $key,
				'json' => new stdClass(),
			)
		);
		switch ( $response['status'] ) {
			case 422:
				listgate_queue_notice( 'success', __( 'The lead key works: enquiries will be sent to Listgate.', 'listgate' ) );
				break;
			case 401:
				listgate_queue_notice( 'warning', __( 'Listgate does not accept this lead key (unknown or revoked). Enquiries will not be sent until a working key is saved.', 'listgate' ) );
				break;
			case 403:
				listgate_queue_notice( 'warning', __( 'This key lacks the leads:write scope. Create one with leads:write and save it here.', 'listgate' ) );
				break;
			default:
				listgate_queue_notice( 'warning', __( 'The lead key was saved, but Listgate could not be asked whether it works right now.', 'listgate' ) );
		}
	}

	/**
	 * Checks a beacon id an administrator entered before it is stored: it
	 * goes into every listing page, so it must be the site's beacon id
	 * (scope views:write alone) and never a secret key. Listgate answers a
	 * HEAD of the pixel with it (which counts nothing) with 200 only for a
	 * key of this site with views:write, which can have no other scope.
	 *
	 * @param string $id The id entered; "" forgets the current one.
	 * @return string "" when it may be stored, else what is wrong.
	 */
	private static function check_beacon_id( $id ) {
		if ( '' === $id ) {
			return '';
		}
		if ( ! preg_match( Listgate_Views::BEACON_PATTERN, $id ) ) {
			return __( 'That is not a beacon id (they start with lgk_ and are 40 characters long).', 'listgate' );
		}
		if ( hash_equals( (string) get_option( 'listgate_api_key', '' ), $id ) || hash_equals( (string) get_option( 'listgate_lead_key', '' ), $id ) ) {
			return __( 'That is a secret key of this site, not its beacon id: it must never be put in a page.', 'listgate' );
		}
		if ( ! listgate_is_connected() ) {
			return __( 'Connect this site first: connecting fills in the beacon id.', 'listgate' );
		}
		$response = Listgate_Client::request(
			'HEAD',
			Listgate_Client::site_path( 'views.gif' ),
			array(
				'query'   => array(
					'k'       => $id,
					'listing' => '1',
				),
				'headers' => array( 'Accept' => 'image/gif' ),
			)
		);
		switch ( $response['status'] ) {
			case 200:
				return '';
			case 401:
				return __( 'Listgate does not know this beacon id (unknown or rotated).', 'listgate' );
			case 403:
				return __( 'Listgate says this is not this site\'s beacon id (another site\'s, or a key with other scopes, which must never be put in a page).', 'listgate' );
			default:
				return __( 'Listgate could not check the beacon id right now; try again in a moment.', 'listgate' );
		}
	}

	/**
	 * Forgets every cached response. admin-post action listgate_clear_cache.
	 *
	 * @return void
	 */
	public static function handle_clear_cache() {
		self::guard( 'listgate_clear_cache' );
		Listgate_Client::flush_cache();
		listgate_queue_notice( 'success', __( 'The Listgate cache was cleared: the next page views read fresh data.', 'listgate' ) );
		wp_safe_redirect( listgate_settings_url() );
		exit;
	}

	/**
	 * Prints a form that posts one admin-post action with a nonce.
	 *
	 * @param string $action The action (also the nonce action).
	 * @param string $id     The submit button's id.
	 * @param string $label  The button's label.
	 * @param string $class  The button's classes.
	 * @return void
	 */
	private static function action_button( $action, $id, $label, $class = 'button' ) {
		?>
		<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>" class="listgate-action">
			<input type="hidden" name="action" value="<?php echo esc_attr( $action ); ?>">
			<?php wp_nonce_field( $action ); ?>
			<button type="submit" id="<?php echo esc_attr( $id ); ?>" class="<?php echo esc_attr( $class ); ?>"><?php echo esc_html( $label ); ?></button>
		</form>
		<?php
	}

	/**
	 * Prints the page.
	 *
	 * @return void
	 */
	public static function render() {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$base     = listgate_base_url();
		$lead_key = (string) get_option( 'listgate_lead_key', '' );
		?>
		<div class="wrap listgate-settings">
			<h1><?php esc_html_e( 'Listgate', 'listgate' ); ?></h1>
			<?php
			foreach ( listgate_take_notices() as $notice ) {
				$type = in_array( $notice['type'], array( 'success', 'error', 'warning', 'info' ), true ) ? $notice['type'] : 'info';
				?>
				<div class="notice notice-<?php echo esc_attr( $type ); ?> is-dismissible listgate-admin-notice"><p><?php echo esc_html( $notice['message'] ); ?></p></div>
				<?php
			}
			?>

			<h2><?php esc_html_e( 'Connection', 'listgate' ); ?></h2>
			<?php self::render_connection( $base ); ?>

			<h2><?php esc_html_e( 'Settings', 'listgate' ); ?></h2>
			<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>" id="listgate-settings-form">
				<input type="hidden" name="action" value="listgate_save_settings">
				<?php wp_nonce_field( 'listgate_save_settings' ); ?>
				<table class="form-table" role="presentation">
					<tr>
						<th scope="row"><label for="listgate_base_url"><?php esc_html_e( 'Listgate address', 'listgate' ); ?></label></th>
						<td>
							<input type="url" name="listgate_base_url" id="listgate_base_url" class="regular-text code" value="<?php echo esc_attr( $base ); ?>" placeholder="https://api.listgate.example">
							<p class="description"><?php esc_html_e( 'The address of the Listgate API, with or without /v1 at the end.', 'listgate' ); ?></p>
						</td>
					</tr>
					<tr>
						<th scope="row"><label for="listgate_lead_key"><?php esc_html_e( 'Lead key', 'listgate' ); ?></label></th>
						<td>
							<input type="password" name="listgate_lead_key" id="listgate_lead_key" class="regular-text code" value="" autocomplete="new-password" spellcheck="false"
								placeholder="<?php echo esc_attr( '' === $lead_key ? __( 'lgk_…', 'listgate' ) : listgate_mask_key( $lead_key ) ); ?>">
							<?php if ( '' !== $lead_key ) : ?>
								<p class="listgate-lead-key-current">
									<?php esc_html_e( 'Current lead key:', 'listgate' ); ?> <code><?php echo esc_html( listgate_mask_key( $lead_key ) ); ?></code>
									<label><input type="checkbox" name="listgate_lead_key_clear" value="1"> <?php esc_html_e( 'Remove it', 'listgate' ); ?></label>
								</p>
							<?php endif; ?>
							<p class="description">
								<?php esc_html_e( 'An API key of your Listgate site with the leads:write scope; the enquiry form sends leads with it. The key that pairing creates is read-only. Leave empty to keep the current key.', 'listgate' ); ?>
							</p>
						</td>
					</tr>
					<tr>
						<th scope="row"><?php esc_html_e( 'Listing views', 'listgate' ); ?></th>
						<td>
							<label for="listgate_views_enabled">
								<input type="checkbox" name="listgate_views_enabled" id="listgate_views_enabled" value="1" <?php checked( Listgate_Views::enabled() ); ?>>
								<?php esc_html_e( 'Count views of listing pages', 'listgate' ); ?>
							</label>
							<p class="description">
								<?php esc_html_e( 'A listing page tells Listgate, after it has loaded, that it was viewed: the listing and the page\'s path, nothing about the visitor, and no cookie. Listgate counts views and unique visitors per listing and day for your vendor reports. Views by users who can edit posts, previews and admin pages are not counted. Unticked, pages carry no beacon at all.', 'listgate' ); ?>
							</p>
						</td>
					</tr>
					<tr>
						<th scope="row"><label for="listgate_beacon_id"><?php esc_html_e( 'Beacon id', 'listgate' ); ?></label></th>
						<td>
							<input type="text" name="listgate_beacon_id" id="listgate_beacon_id" class="regular-text code" value="<?php echo esc_attr( Listgate_Views::beacon_id() ); ?>" spellcheck="false" autocomplete="off" placeholder="<?php esc_attr_e( 'lgk_…', 'listgate' ); ?>">
							<p class="description">
								<?php esc_html_e( 'Your Listgate site\'s public beacon id: it can only count views, and is in the source of every listing page by design. Connecting fills it in; a site connected before version 1.2 can connect again, or paste it here.', 'listgate' ); ?>
							</p>
						</td>
					</tr>
				</table>
				<p class="submit"><button type="submit" id="listgate-save" class="button button-primary"><?php esc_html_e( 'Save settings', 'listgate' ); ?></button></p>
			</form>

			<h2><?php esc_html_e( 'Cache', 'listgate' ); ?></h2>
			<p><?php esc_html_e( 'Listings are kept for as long as Listgate says they are fresh (usually a minute) and revalidated after that. When Listgate is busy or unreachable the last copy is shown. Clear the cache to read everything again now.', 'listgate' ); ?></p>
			<?php self::action_button( 'listgate_clear_cache', 'listgate-clear-cache', __( 'Clear cache', 'listgate' ) ); ?>
		</div>
		<?php
	}

	/**
	 * Prints the connection section: connected, pairing, or the Connect button.
	 *
	 * @param string $base The Listgate address.
	 * @return void
	 */
	private static function render_connection( $base ) {
		if ( listgate_is_connected() ) {
			$key = (string) get_option( 'listgate_api_key', '' );
			?>
			<div id="listgate-connected" class="listgate-connected">
				<p>
					<?php esc_html_e( 'Connected to Listgate site', 'listgate' ); ?>
					<strong class="listgate-site-id" style="font-family:monospace;"><?php echo esc_html( (string) get_option( 'listgate_site_id', '' ) ); ?></strong>
					<?php esc_html_e( 'at', 'listgate' ); ?> <span class="listgate-base-url" style="font-family:monospace;"><?php echo esc_html( $base ); ?></span>
				</p>
				<p>
					<?php esc_html_e( 'Key:', 'listgate' ); ?> <span class="listgate-key" style="font-family:monospace;"><?php echo esc_html( listgate_mask_key( $key ) ); ?></span>
				</p>
				<p class="listgate-scopes">
					<?php esc_html_e( 'Scopes:', 'listgate' ); ?>
					<?php foreach ( listgate_scopes() as $scope ) : ?>
						<code class="listgate-scope"><?php echo esc_html( $scope ); ?></code>
					<?php endforeach; ?>
				</p>
				<?php self::action_button( 'listgate_disconnect', 'listgate-disconnect', __( 'Disconnect', 'listgate' ), 'button button-secondary' ); ?>
			</div>
			<?php
			return;
		}
		if ( '' === $base ) {
			?>
			<p><?php esc_html_e( 'Enter the Listgate address below and save; then connect this site.', 'listgate' ); ?></p>
			<?php
			return;
		}
		$pairing = Listgate_Pairing::current();
		if ( null !== $pairing ) {
			$left = max( 0, (int) $pairing['expires_at'] - time() );
			?>
			<div id="listgate-pairing" class="listgate-pairing" data-interval="<?php echo esc_attr( (string) (int) $pairing['interval'] ); ?>" data-expires-in="<?php echo esc_attr( (string) $left ); ?>">
				<p class="listgate-pairing-live"><?php esc_html_e( 'Approve this site in Listgate. Open the link below, sign in, check that the code matches and choose the Listgate site to show.', 'listgate' ); ?></p>
				<p class="listgate-user-code-wrap listgate-pairing-live">
					<?php esc_html_e( 'Code:', 'listgate' ); ?>
					<strong id="listgate-user-code" class="listgate-user-code" style="font-size:1.6em;letter-spacing:.1em;font-family:monospace;"><?php echo esc_html( $pairing['user_code'] ); ?></strong>
				</p>
				<p class="listgate-pairing-live">
					<a id="listgate-verify-link" class="button button-primary" href="<?php echo esc_url( $pairing['verification_uri_complete'] ); ?>" target="_blank" rel="noopener noreferrer"><?php esc_html_e( 'Open Listgate to approve', 'listgate' ); ?></a>
				</p>
				<p id="listgate-pairing-status" class="listgate-pairing-status" aria-live="polite"><?php esc_html_e( 'Waiting for approval…', 'listgate' ); ?></p>
				<p class="description listgate-pairing-live">
					<?php
					/* translators: %d: minutes. */
					echo esc_html( sprintf( _n( 'The code expires in about %d minute.', 'The code expires in about %d minutes.', (int) ceil( $left / 60 ), 'listgate' ), (int) ceil( $left / 60 ) ) );
					?>
				</p>
				<div class="listgate-pairing-live">
					<?php self::action_button( 'listgate_cancel_pairing', 'listgate-cancel-pairing', __( 'Cancel', 'listgate' ) ); ?>
				</div>
				<p class="listgate-pairing-restart" hidden>
					<a class="button button-primary" href="<?php echo esc_url( listgate_settings_url() ); ?>"><?php esc_html_e( 'Start again', 'listgate' ); ?></a>
				</p>
			</div>
			<?php
			return;
		}
		$outcome = get_transient( Listgate_Pairing::OUTCOME_TRANSIENT );
		$message = is_array( $outcome ) && isset( $outcome['message'] ) ? (string) $outcome['message'] : '';
		?>
		<p><?php esc_html_e( 'This site is not connected. Connect starts pairing: you approve it in the Listgate dashboard, and Listgate gives this site a read-only key.', 'listgate' ); ?></p>
		<p id="listgate-pairing-status" class="listgate-pairing-status" aria-live="polite"><?php echo esc_html( $message ); ?></p>
		<?php
		self::action_button( 'listgate_connect', 'listgate-connect', __( 'Connect', 'listgate' ), 'button button-primary' );
	}
}
