<?php
/**
 * The per-visitor limit on API calls: one visitor cannot spend the site's
 * plan (shared by every visitor) by asking for page after uncached page.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Counts the uncached API calls each visitor causes, per minute.
 *
 * A visitor is a salted hash of their address (REMOTE_ADDR, or what the
 * filter listgate_visitor_ip gives; IPv6 addresses by their /64 network):
 * no address is stored. The counts live in the persistent object cache
 * when the site has one (a key per visitor and minute, expiring after two
 * minutes), else in one option, listgate_throttle, that holds the current
 * minute's counts only (at most MAX_VISITORS of them). Counting is not
 * atomic without an object cache: requests served at the same moment may
 * let a visitor through a call or two more than the limit.
 */
class Listgate_Throttle {

	/**
	 * Uncached API calls one visitor may cause a minute (filter
	 * listgate_visitor_api_calls_per_minute; 0 turns the limit off).
	 */
	const LIMIT = 10;

	/**
	 * The length of a counting window, in seconds.
	 */
	const WINDOW = 60;

	/**
	 * The option that holds the counts without a persistent object cache.
	 */
	const OPTION = 'listgate_throttle';

	/**
	 * The object cache group of the counts.
	 */
	const GROUP = 'listgate_throttle';

	/**
	 * The most visitors counted in one window without an object cache;
	 * more are let through uncounted (the site's plan limit and the
	 * Retry-After it brings still apply), so the option cannot grow.
	 */
	const MAX_VISITORS = 1000;

	/**
	 * Whether the current visitor may cause one more API call now; when so,
	 * the call is counted. Requests that are not a visitor's (WP-CLI, cron)
	 * are not limited.
	 *
	 * @return bool
	 */
	public static function allow() {
		$visitor = self::visitor();
		if ( '' === $visitor ) {
			return true;
		}
		/**
		 * Filters how many uncached Listgate API calls one visitor may cause
		 * a minute. Past it the visitor gets cached copies, or the
		 * "unavailable" message, until the minute is over.
		 *
		 * @param int $limit Calls a minute; default 10; 0 for no limit.
		 */
		$limit = (int) apply_filters( 'listgate_visitor_api_calls_per_minute', self::LIMIT );
		if ( $limit <= 0 ) {
			return true;
		}
		$window = intdiv( time(), self::WINDOW );
		if ( wp_using_ext_object_cache() ) {
			$key = $window . ':' . $visitor;
			wp_cache_add( $key, 0, self::GROUP, 2 * self::WINDOW );
			$count = wp_cache_incr( $key, 1, self::GROUP );
			// A cache that cannot count lets the call through.
			return false === $count || (int) $count <= $limit;
		}

		$state = get_option( self::OPTION );
		if ( ! is_array( $state ) || ! isset( $state['window'], $state['counts'] ) || ! is_array( $state['counts'] ) || (int) $state['window'] !== $window ) {
			$state = array(
				'window' => $window,
				'counts' => array(),
			);
		}
		$count = isset( $state['counts'][ $visitor ] ) ? (int) $state['counts'][ $visitor ] : 0;
		if ( $count >= $limit ) {
			return false;
		}
		if ( 0 === $count && count( $state['counts'] ) >= self::MAX_VISITORS ) {
			return true;
		}
		$state['counts'][ $visitor ] = $count + 1;
		listgate_update_private_option( self::OPTION, $state );
		return true;
	}

	/**
	 * The current visitor: a salted hash of their address.
	 *
	 * @return string 16 hex digits; "" when the request has no address (not a visitor's).
	 */
	private static function visitor() {
		$ip = isset( $_SERVER['REMOTE_ADDR'] ) ? (string) $_SERVER['REMOTE_ADDR'] : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput -- only hashed.
		/**
		 * Filters the visitor's address the per-visitor limit counts by.
		 * Behind a reverse proxy or CDN every visitor has the proxy's
		 * REMOTE_ADDR: return the client's address from the header your
		 * proxy sets, and only when the request came from that proxy.
		 *
		 * @param string $ip REMOTE_ADDR.
		 */
		$ip = trim( (string) apply_filters( 'listgate_visitor_ip', $ip ) );
		if ( '' === $ip ) {
			return '';
		}
		$packed = filter_var( $ip, FILTER_VALIDATE_IP ) ? inet_pton( $ip ) : false;
		if ( false === $packed ) {
			// Not an address: such requests share one count.
			$packed = 'invalid';
		} elseif ( 16 === strlen( $packed ) && ! str_starts_with( $packed, str_repeat( "\0", 10 ) . "\xff\xff" ) ) {
			// One IPv6 host usually has a whole /64.
			$packed = substr( $packed, 0, 8 );
		}
		return substr( hash_hmac( 'sha256', $packed, wp_salt( 'nonce' ) ), 0, 16 );
	}
}
