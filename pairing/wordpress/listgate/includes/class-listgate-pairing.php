<?php
/**
 * The client half of pairing (API.md "Pairing a WordPress site"): start,
 * poll, cancel and disconnect.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Connects the site to Listgate with device-style codes (RFC 8628) and
 * disconnects it again.
 *
 * A pairing in progress lives in one transient: the device code (never
 * shown), the user code and verification address (shown to the
 * administrator), the poll interval, the expiry and the earliest time of
 * the next poll, so the token endpoint is never polled faster than the
 * interval, whatever the browser does.
 */
class Listgate_Pairing {

	/**
	 * The transient of the pairing in progress.
	 */
	const TRANSIENT = 'listgate_pairing';

	/**
	 * The transient that keeps how the last pairing ended, for the next page view.
	 */
	const OUTCOME_TRANSIENT = 'listgate_pairing_outcome';

	/**
	 * RFC 8628 §3.4 grant type.
	 */
	const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

	/**
	 * What slow_down adds to the interval (RFC 8628 §3.5).
	 */
	const SLOW_DOWN_STEP = 5;

	/**
	 * Registers the admin-post and AJAX handlers.
	 *
	 * @return void
	 */
	public static function register() {
		add_action( 'admin_post_listgate_connect', array( __CLASS__, 'handle_connect' ) );
		add_action( 'admin_post_listgate_cancel_pairing', array( __CLASS__, 'handle_cancel' ) );
		add_action( 'admin_post_listgate_disconnect', array( __CLASS__, 'handle_disconnect' ) );
		add_action( 'wp_ajax_listgate_pairing_poll', array( __CLASS__, 'ajax_poll' ) );
	}

	/**
	 * The pairing in progress.
	 *
	 * @return array|null With device_code, user_code, verification_uri, verification_uri_complete, interval, expires_at, next_poll_at.
	 */
	public static function current() {
		$pairing = get_transient( self::TRANSIENT );
		if ( ! is_array( $pairing ) || empty( $pairing['device_code'] ) || empty( $pairing['expires_at'] ) ) {
			return null;
		}
		if ( (int) $pairing['expires_at'] <= time() ) {
			delete_transient( self::TRANSIENT );
			return null;
		}
		return $pairing;
	}

	/**
	 * Checks the user may manage the plugin and the request's nonce.
	 *
	 * @param string $action The nonce action.
	 * @return void Dies when either fails.
	 */
	private static function guard( $action ) {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to manage Listgate.', 'listgate' ), '', array( 'response' => 403 ) );
		}
		check_admin_referer( $action );
	}

	/**
	 * Starts pairing: POST /v1/pairing/device. admin-post action listgate_connect.
	 *
	 * @return void
	 */
	public static function handle_connect() {
		self::guard( 'listgate_connect' );
		delete_transient( self::OUTCOME_TRANSIENT );
		if ( '' === listgate_base_url() ) {
			listgate_queue_notice( 'error', __( 'Enter and save the Listgate address first.', 'listgate' ) );
		} elseif ( listgate_is_connected() ) {
			listgate_queue_notice( 'info', __( 'This site is already connected. Disconnect it first to pair it again.', 'listgate' ) );
		} else {
			self::start();
		}
		wp_safe_redirect( listgate_settings_url() );
		exit;
	}

	/**
	 * Asks Listgate for codes and stores them.
	 *
	 * @return void
	 */
	private static function start() {
		$site_name = wp_strip_all_tags( get_bloginfo( 'name' ) );
		if ( function_exists( 'mb_substr' ) ) {
			$site_name = mb_substr( $site_name, 0, 200 );
		}
		$response = Listgate_Client::request(
			'POST',
			'pairing/device',
			array(
				'json' => array(
					'home_url'       => home_url(),
					'site_name'      => $site_name,
					'plugin_version' => LISTGATE_VERSION,
				),
			)
		);
		$json = $response['json'];
		if ( 200 === $response['status'] && is_array( $json ) && ! empty( $json['device_code'] ) && ! empty( $json['user_code'] ) ) {
			$expires_in = isset( $json['expires_in'] ) ? max( 30, (int) $json['expires_in'] ) : 600;
			$interval   = isset( $json['interval'] ) ? max( 1, (int) $json['interval'] ) : 5;
			$complete   = isset( $json['verification_uri_complete'] ) ? (string) $json['verification_uri_complete'] : '';
			$verify     = isset( $json['verification_uri'] ) ? (string) $json['verification_uri'] : '';
			$pairing    = array(
				'device_code'               => (string) $json['device_code'],
				'user_code'                 => sanitize_text_field( (string) $json['user_code'] ),
				'verification_uri'          => esc_url_raw( $verify ),
				'verification_uri_complete' => esc_url_raw( '' !== $complete ? $complete : $verify ),
				'interval'                  => $interval,
				'expires_at'                => time() + $expires_in,
				'next_poll_at'              => microtime( true ) + $interval,
			);
			set_transient( self::TRANSIENT, $pairing, $expires_in );
			return;
		}
		listgate_queue_notice( 'error', self::describe_start_failure( $response ) );
	}

	/**
	 * Words a failed start for the administrator.
	 *
	 * @param array $response See Listgate_Client::request().
	 * @return string
	 */
	private static function describe_start_failure( $response ) {
		$status = $response['status'];
		if ( 0 === $status ) {
			/* translators: 1: the Listgate address, 2: the error. */
			return sprintf( __( 'Could not reach Listgate at %1$s: %2$s', 'listgate' ), listgate_base_url(), $response['error'] );
		}
		if ( 429 === $status ) {
			return __( 'Too many pairing attempts from this server. Wait a few minutes and try again.', 'listgate' );
		}
		if ( 422 === $status ) {
			$details = Listgate_Client::error_details( $response['json'] );
			$parts   = array();
			foreach ( $details as $field => $message ) {
				$parts[] = $field . ' ' . $message;
			}
			/* translators: %s: what Listgate found wrong. */
			return sprintf( __( 'Listgate did not accept this site: %s', 'listgate' ), implode( '; ', $parts ) );
		}
		if ( 404 === $status ) {
			return __( 'Listgate answered 404: check the Listgate address (it should be the API address, e.g. https://api.listgate.example).', 'listgate' );
		}
		/* translators: %d: HTTP status. */
		return sprintf( __( 'Listgate could not start pairing (HTTP %d). Try again in a moment.', 'listgate' ), $status );
	}

	/**
	 * Forgets the pairing in progress. admin-post action listgate_cancel_pairing.
	 *
	 * @return void
	 */
	public static function handle_cancel() {
		self::guard( 'listgate_cancel_pairing' );
		delete_transient( self::TRANSIENT );
		delete_transient( self::OUTCOME_TRANSIENT );
		listgate_queue_notice( 'info', __( 'Pairing cancelled.', 'listgate' ) );
		wp_safe_redirect( listgate_settings_url() );
		exit;
	}

	/**
	 * One poll: POST /v1/pairing/token at most once per interval. AJAX
	 * action listgate_pairing_poll. Answers JSON {status, interval, retry_in, message}:
	 * status "pending", "slow_down", "wait" (asked before the interval
	 * passed; nothing was sent), "connected", "denied", "expired", "none"
	 * or "error".
	 *
	 * @return void
	 */
	public static function ajax_poll() {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_send_json(
				array(
					'status'  => 'error',
					'message' => __( 'Sorry, you are not allowed to manage Listgate.', 'listgate' ),
				),
				403
			);
		}
		check_ajax_referer( 'listgate_pairing_poll' );
		wp_send_json( self::poll() );
	}

	/**
	 * Polls the token endpoint if the interval has passed.
	 *
	 * @return array The answer for the browser.
	 */
	public static function poll() {
		if ( listgate_is_connected() ) {
			return self::answer( 'connected', 0, __( 'Connected.', 'listgate' ) );
		}
		$pairing = self::current();
		if ( null === $pairing ) {
			$outcome = get_transient( self::OUTCOME_TRANSIENT );
			if ( is_array( $outcome ) && isset( $outcome['status'], $outcome['message'] ) ) {
				return self::answer( $outcome['status'], 0, $outcome['message'] );
			}
			return self::answer( 'expired', 0, __( 'No pairing is in progress, or its code has expired. Start again with Connect.', 'listgate' ) );
		}
		$interval = (int) $pairing['interval'];
		$now      = microtime( true );
		if ( $now < (float) $pairing['next_poll_at'] ) {
			$answer             = self::answer( 'wait', $interval, __( 'Waiting for approval…', 'listgate' ) );
			$answer['retry_in'] = max( 1, (int) ceil( (float) $pairing['next_poll_at'] - $now ) );
			return $answer;
		}
		// Claim this slot before the request, so concurrent polls wait.
		$pairing['next_poll_at'] = $now + $interval;
		self::save( $pairing );

		$response = Listgate_Client::request(
			'POST',
			'pairing/token',
			array(
				'json' => array(
					'grant_type'  => self::GRANT_TYPE,
					'device_code' => $pairing['device_code'],
				),
			)
		);
		$json = is_array( $response['json'] ) ? $response['json'] : array();

		if ( 200 === $response['status'] ) {
			return self::complete( $json );
		}
		$code = isset( $json['error'] ) && is_string( $json['error'] ) ? $json['error'] : '';
		if ( 400 === $response['status'] && 'authorization_pending' === $code ) {
			return self::answer( 'pending', $interval, __( 'Waiting for approval…', 'listgate' ) );
		}
		if ( 400 === $response['status'] && 'slow_down' === $code ) {
			$interval                = min( 60, $interval + self::SLOW_DOWN_STEP );
			$pairing['interval']     = $interval;
			$pairing['next_poll_at'] = microtime( true ) + $interval;
			self::save( $pairing );
			return self::answer( 'slow_down', $interval, __( 'Waiting for approval…', 'listgate' ) );
		}
		if ( 400 === $response['status'] && 'access_denied' === $code ) {
			return self::end( 'denied', __( 'The pairing was denied in Listgate. Start again with Connect if that was a mistake.', 'listgate' ) );
		}
		if ( 400 === $response['status'] && in_array( $code, array( 'expired_token', 'invalid_grant' ), true ) ) {
			return self::end( 'expired', __( 'The pairing code has expired. Start again with Connect.', 'listgate' ) );
		}
		if ( 429 === $response['status'] || 0 === $response['status'] || $response['status'] >= 500 ) {
			$wait = $interval;
			if ( isset( $response['headers']['retry-after'] ) && ctype_digit( trim( $response['headers']['retry-after'] ) ) ) {
				$wait = min( 60, max( $interval, (int) $response['headers']['retry-after'] ) );
			}
			$pairing['next_poll_at'] = microtime( true ) + $wait;
			self::save( $pairing );
			return self::answer( 'pending', $wait, __( 'Listgate is not answering right now; still trying…', 'listgate' ) );
		}
		/* translators: %d: HTTP status. */
		return self::end( 'error', sprintf( __( 'Pairing failed (HTTP %d). Start again with Connect.', 'listgate' ), $response['status'] ) );
	}

	/**
	 * Stores the delivered key.
	 *
	 * @param array $json The 200 body: api_key, key_id, site_id, scopes, base_url, beacon_id.
	 * @return array The answer for the browser.
	 */
	private static function complete( $json ) {
		$key  = isset( $json['api_key'] ) ? (string) $json['api_key'] : '';
		$site = isset( $json['site_id'] ) ? strtolower( (string) $json['site_id'] ) : '';
		if ( ! preg_match( '/^lgk_[A-Za-z0-9]{36}$/', $key ) || ! wp_is_uuid( $site ) ) {
			return self::end( 'error', __( 'Listgate sent a key this plugin does not understand. Start again with Connect.', 'listgate' ) );
		}
		$scopes = array();
		if ( isset( $json['scopes'] ) && is_array( $json['scopes'] ) ) {
			foreach ( $json['scopes'] as $scope ) {
				if ( is_string( $scope ) && preg_match( '/^[a-z]+:[a-z]+$/', $scope ) ) {
					$scopes[] = $scope;
				}
			}
		}
		listgate_update_private_option( 'listgate_api_key', $key );
		listgate_update_private_option( 'listgate_site_id', $site );
		listgate_update_private_option( 'listgate_key_id', isset( $json['key_id'] ) ? sanitize_text_field( (string) $json['key_id'] ) : '' );
		listgate_update_private_option( 'listgate_scopes', $scopes );
		// The site's beacon id (public, views:write alone), for the listing
		// view beacons; a Listgate without one leaves the current id.
		$beacon = isset( $json['beacon_id'] ) && is_string( $json['beacon_id'] ) ? $json['beacon_id'] : '';
		if ( '' !== $beacon && $beacon !== $key ) {
			Listgate_Views::set_beacon_id( $beacon );
		}
		delete_transient( self::TRANSIENT );
		delete_transient( self::OUTCOME_TRANSIENT );
		Listgate_Client::flush_cache();
		listgate_queue_notice( 'success', __( 'Connected to Listgate.', 'listgate' ) );
		return self::answer( 'connected', 0, __( 'Connected. Reloading…', 'listgate' ) );
	}

	/**
	 * Ends the pairing in progress with an outcome the next page view shows.
	 *
	 * @param string $status  The status for the browser.
	 * @param string $message The message.
	 * @return array The answer for the browser.
	 */
	private static function end( $status, $message ) {
		delete_transient( self::TRANSIENT );
		set_transient(
			self::OUTCOME_TRANSIENT,
			array(
				'status'  => $status,
				'message' => $message,
			),
			10 * MINUTE_IN_SECONDS
		);
		return self::answer( $status, 0, $message );
	}

	/**
	 * Stores the pairing for the rest of its lifetime.
	 *
	 * @param array $pairing The pairing.
	 * @return void
	 */
	private static function save( $pairing ) {
		$left = (int) $pairing['expires_at'] - time();
		if ( $left > 0 ) {
			set_transient( self::TRANSIENT, $pairing, $left );
		}
	}

	/**
	 * An answer for the browser.
	 *
	 * @param string $status   The status.
	 * @param int    $interval Seconds until the next poll.
	 * @param string $message  Plain text.
	 * @return array
	 */
	private static function answer( $status, $interval, $message ) {
		return array(
			'status'   => $status,
			'interval' => $interval,
			'retry_in' => $interval,
			'message'  => $message,
		);
	}

	/**
	 * Disconnects: DELETE /v1/pairing with the paired key, then forgets the
	 * key, site, scopes and cache whatever the answer. admin-post action
	 * listgate_disconnect.
	 *
	 * @return void
	 */
	public static function handle_disconnect() {
		self::guard( 'listgate_disconnect' );
		$key = (string) get_option( 'listgate_api_key', '' );
		if ( '' === $key || '' === listgate_base_url() ) {
			listgate_forget_connection();
			listgate_queue_notice( 'info', __( 'This site was not connected.', 'listgate' ) );
			wp_safe_redirect( listgate_settings_url() );
			exit;
		}
		$response = Listgate_Client::request( 'DELETE', 'pairing', array( 'key' => $key ) );
		listgate_forget_connection();
		$status = $response['status'];
		if ( 204 === $status || 200 === $status ) {
			listgate_queue_notice( 'success', __( 'Disconnected from Listgate. Its key has been revoked.', 'listgate' ) );
		} elseif ( 401 === $status ) {
			listgate_queue_notice( 'warning', __( 'Disconnected. Listgate no longer accepted the key (it was already revoked), so this site has simply forgotten it.', 'listgate' ) );
		} elseif ( 403 === $status ) {
			listgate_queue_notice( 'warning', __( 'Disconnected locally. The key was not issued by pairing, so Listgate did not revoke it: revoke it in the Listgate dashboard.', 'listgate' ) );
		} elseif ( 0 === $status ) {
			/* translators: %s: the error. */
			listgate_queue_notice( 'warning', sprintf( __( 'Disconnected locally, but Listgate could not be reached (%s): disconnect this site in the Listgate dashboard too, so its key is revoked.', 'listgate' ), $response['error'] ) );
		} else {
			/* translators: %d: HTTP status. */
			listgate_queue_notice( 'warning', sprintf( __( 'Disconnected locally, but Listgate answered HTTP %d: disconnect this site in the Listgate dashboard too, so its key is revoked.', 'listgate' ), $status ) );
		}
		wp_safe_redirect( listgate_settings_url() );
		exit;
	}
}
