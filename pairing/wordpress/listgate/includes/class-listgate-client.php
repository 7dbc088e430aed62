<?php
/**
 * HTTP client of the Listgate API, with the response cache that keeps a
 * busy site within its plan's rate limit.
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Talks to the Listgate API.
 *
 * Reads (get) are cached in transients: each response is kept for a day,
 * fresh for the response's Cache-Control max-age (at least 5 s, 60 s when
 * it has none; the filter listgate_cache_fresh_seconds overrides it). A
 * fresh copy is used without any HTTP call; a stale one is revalidated
 * with If-None-Match (304 keeps it); when Listgate answers 429 or 5xx or
 * cannot be reached, the stale copy is served. A 404 is kept for
 * NOT_FOUND_LIFETIME only. At most MAX_ENTRIES responses are kept (filter
 * listgate_cache_max_entries): storing one more deletes the ones closest
 * to expiry. Each call is counted against the visitor's limit
 * (Listgate_Throttle); past it, the cached copy or nothing is served.
 */
class Listgate_Client {

	/**
	 * Timeout of every request, in seconds.
	 */
	const TIMEOUT = 5;

	/**
	 * Prefix of the transients that hold cached responses.
	 */
	const CACHE_PREFIX = 'listgate_c_';

	/**
	 * How long a cached response is kept (stale copies included).
	 */
	const CACHE_LIFETIME = DAY_IN_SECONDS;

	/**
	 * How long a 404 answer is kept, in seconds: long enough to spare
	 * Listgate a burst of views of one dead link, too short to fill the
	 * cache with made-up references.
	 */
	const NOT_FOUND_LIFETIME = 30;

	/**
	 * The most cached responses kept in the options table (filter
	 * listgate_cache_max_entries). A persistent object cache bounds them by
	 * its own memory limit instead.
	 */
	const MAX_ENTRIES = 500;

	/**
	 * Freshness of a response without a max-age, in seconds.
	 */
	const DEFAULT_FRESH = 60;

	/**
	 * Least freshness of a response, in seconds.
	 */
	const MIN_FRESH = 5;

	/**
	 * The transient that holds the time until which Listgate asked us to
	 * wait (Retry-After of a 429 or 503).
	 */
	const BACKOFF_TRANSIENT = 'listgate_backoff';

	/**
	 * The longest wait honoured from a Retry-After header, in seconds.
	 */
	const MAX_BACKOFF = 60;

	/**
	 * The wait after a 429 or 503 without a usable Retry-After, in seconds.
	 */
	const DEFAULT_BACKOFF = 5;

	/**
	 * Responses already read in this PHP request, by cache key.
	 *
	 * @var array
	 */
	private static $memo = array();

	/**
	 * Whether this PHP request has logged a failure already.
	 *
	 * @var bool
	 */
	private static $logged = false;

	/**
	 * The path of a resource of the paired site.
	 *
	 * @param string $rest The part after /sites/{site}/, e.g. "listings".
	 * @return string E.g. "sites/0b6c…/listings".
	 */
	public static function site_path( $rest ) {
		return 'sites/' . rawurlencode( (string) get_option( 'listgate_site_id', '' ) ) . '/' . ltrim( $rest, '/' );
	}

	/**
	 * Sends one request to the API.
	 *
	 * @param string $method HTTP method.
	 * @param string $path   Path below /v1.
	 * @param array  $args   Optional: "key" (sent as a Bearer token), "query" (array), "json" (body, encoded as JSON), "headers" (array).
	 * @return array "status" (0 on a transport error), "headers" (lower-case names), "body" (string), "json" (decoded body or null), "error" (transport error message, "" otherwise).
	 */
	public static function request( $method, $path, $args = array() ) {
		$url = listgate_api_url( $path );
		if ( ! empty( $args['query'] ) ) {
			$url .= '?' . self::canonical_query( $args['query'] );
		}
		$headers = array(
			'Accept' => 'application/json',
		);
		if ( ! empty( $args['key'] ) ) {
			$headers['Authorization'] = 'Bearer ' . $args['key'];
		}
		$request = array(
			'method'      => $method,
			'timeout'     => self::TIMEOUT,
			'redirection' => 0,
			'user-agent'  => 'Listgate-WordPress/' . LISTGATE_VERSION . '; ' . home_url( '/' ),
		);
		if ( array_key_exists( 'json', $args ) ) {
			$headers['Content-Type'] = 'application/json; charset=utf-8';
			$request['body']         = wp_json_encode( $args['json'] );
		}
		if ( ! empty( $args['headers'] ) ) {
			$headers = array_merge( $headers, $args['headers'] );
		}
		$request['headers'] = $headers;

		$response = wp_remote_request( $url, $request );
		if ( is_wp_error( $response ) ) {
			return array(
				'status'  => 0,
				'headers' => array(),
				'body'    => '',
				'json'    => null,
				'error'   => $response->get_error_message(),
			);
		}
		$body = (string) wp_remote_retrieve_body( $response );
		$json = '' === $body ? null : json_decode( $body, true );
		return array(
			'status'  => (int) wp_remote_retrieve_response_code( $response ),
			'headers' => self::headers( $response ),
			'body'    => $body,
			'json'    => $json,
			'error'   => '',
		);
	}

	/**
	 * Reads a resource through the cache.
	 *
	 * @param string $path  Path below /v1, e.g. Listgate_Client::site_path( 'listings' ).
	 * @param array  $query Query parameters; empty values are left out.
	 * @return array "status" (of the data: 200, 404, or 0), "data" (decoded JSON or null), "stale" (bool), "error": "" when data is the resource, else "not_connected", "unauthorized" (401/403), "not_found", "invalid" (422, with "details"), "unavailable".
	 */
	public static function get( $path, $query = array() ) {
		if ( ! listgate_is_connected() ) {
			return self::result( 0, null, 'not_connected' );
		}
		$query = self::clean_query( $query );
		$key   = self::cache_key( $path, $query );
		if ( isset( self::$memo[ $key ] ) ) {
			return self::$memo[ $key ];
		}
		$result             = self::fetch( $path, $query, $key );
		self::$memo[ $key ] = $result;
		return $result;
	}

	/**
	 * The cached copy of a resource, fresh or stale, without calling the
	 * API.
	 *
	 * @param string $path  Path below /v1.
	 * @param array  $query Query parameters, as for get().
	 * @return array|null The decoded data, or null when no usable copy is cached.
	 */
	public static function peek( $path, $query = array() ) {
		if ( ! listgate_is_connected() ) {
			return null;
		}
		$key = self::cache_key( $path, self::clean_query( $query ) );
		if ( isset( self::$memo[ $key ] ) ) {
			$result = self::$memo[ $key ];
		} else {
			$entry = self::entry( $key );
			if ( null === $entry ) {
				return null;
			}
			$result = self::from_entry( $entry, false );
		}
		return '' === $result['error'] && is_array( $result['data'] ) ? $result['data'] : null;
	}

	/**
	 * The cached entry of a key.
	 *
	 * @param string $key Transient name.
	 * @return array|null The entry, or null when none is cached.
	 */
	private static function entry( $key ) {
		$entry = get_transient( $key );
		if ( ! is_array( $entry ) || ! isset( $entry['body'], $entry['fresh_until'], $entry['status'] ) ) {
			return null;
		}
		return $entry;
	}

	/**
	 * Reads a resource: from a fresh cached copy, by revalidating a stale
	 * one, or from the API.
	 *
	 * @param string $path  Path below /v1.
	 * @param array  $query Cleaned query.
	 * @param string $key   Transient name.
	 * @return array See get().
	 */
	private static function fetch( $path, $query, $key ) {
		$entry = self::entry( $key );
		$now   = time();
		if ( null !== $entry && $entry['fresh_until'] > $now ) {
			return self::from_entry( $entry, false );
		}
		$backoff = (int) get_transient( self::BACKOFF_TRANSIENT );
		if ( $backoff > $now ) {
			return self::fallback( $entry, $path, 'Listgate asked to wait (Retry-After)', false );
		}
		if ( ! Listgate_Throttle::allow() ) {
			return self::fallback( $entry, $path, 'this visitor has used up their API calls for the minute', false );
		}

		$headers = array();
		if ( null !== $entry && ! empty( $entry['etag'] ) ) {
			$headers['If-None-Match'] = $entry['etag'];
		}
		$response = self::request(
			'GET',
			$path,
			array(
				'key'     => (string) get_option( 'listgate_api_key', '' ),
				'query'   => $query,
				'headers' => $headers,
			)
		);
		$status   = $response['status'];

		if ( 304 === $status && null !== $entry ) {
			$entry['fresh_until'] = $now + self::fresh_seconds( $response['headers'], $path, $query );
			$entry['stored_at']   = $now;
			if ( ! empty( $response['headers']['etag'] ) ) {
				$entry['etag'] = $response['headers']['etag'];
			}
			set_transient( $key, $entry, self::CACHE_LIFETIME );
			return self::from_entry( $entry, false );
		}
		if ( ( 200 === $status || 404 === $status ) && is_array( $response['json'] ) ) {
			$fresh    = self::fresh_seconds( $response['headers'], $path, $query );
			$lifetime = self::CACHE_LIFETIME;
			if ( 404 === $status ) {
				$fresh    = min( $fresh, self::NOT_FOUND_LIFETIME );
				$lifetime = self::NOT_FOUND_LIFETIME;
			}
			$is_new = null === $entry;
			$entry  = array(
				'status'      => $status,
				'body'        => $response['body'],
				'etag'        => 200 === $status && isset( $response['headers']['etag'] ) ? $response['headers']['etag'] : '',
				'fresh_until' => $now + $fresh,
				'stored_at'   => $now,
			);
			set_transient( $key, $entry, $lifetime );
			if ( $is_new ) {
				self::prune();
			}
			return self::from_entry( $entry, false );
		}
		if ( 401 === $status || 403 === $status ) {
			self::log( sprintf( 'GET /v1/%s was refused with HTTP %d: the key may have been revoked; reconnect in Settings > Listgate', $path, $status ) );
			return self::result( $status, null, 'unauthorized' );
		}
		if ( 422 === $status ) {
			$result            = self::result( $status, null, 'invalid' );
			$result['details'] = self::error_details( $response['json'] );
			return $result;
		}
		if ( 429 === $status || 503 === $status ) {
			self::back_off( $response['headers'] );
		}
		$why = 0 === $status ? 'could not be reached (' . $response['error'] . ')' : 'answered HTTP ' . $status;
		return self::fallback( $entry, $path, 'GET /v1/' . $path . ' ' . $why, true );
	}

	/**
	 * The answer when Listgate cannot give one: the stale copy, or
	 * "unavailable".
	 *
	 * @param array|null $entry The cached entry.
	 * @param string     $path  Path below /v1.
	 * @param string     $why   What went wrong, for the log.
	 * @param bool       $log   Whether to log it.
	 * @return array See get().
	 */
	private static function fallback( $entry, $path, $why, $log ) {
		if ( null !== $entry ) {
			if ( $log ) {
				self::log( $why . '; serving a cached copy from ' . human_time_diff( (int) $entry['stored_at'] ) . ' ago' );
			}
			return self::from_entry( $entry, true );
		}
		if ( $log ) {
			self::log( $why . '; no cached copy to serve' );
		}
		return self::result( 0, null, 'unavailable' );
	}

	/**
	 * Sends a lead.
	 *
	 * @param array  $lead            The request body.
	 * @param string $key             A key with leads:write.
	 * @param string $idempotency_key The Idempotency-Key.
	 * @return array See request().
	 */
	public static function post_lead( $lead, $key, $idempotency_key ) {
		return self::request(
			'POST',
			'leads',
			array(
				'key'     => $key,
				'json'    => $lead,
				'headers' => array( 'Idempotency-Key' => $idempotency_key ),
			)
		);
	}

	/**
	 * Forgets every cached response (by bumping listgate_cache_version, which
	 * is part of every cache key) and deletes the stored copies.
	 *
	 * @return void
	 */
	public static function flush_cache() {
		global $wpdb;
		update_option( 'listgate_cache_version', self::cache_version() + 1 );
		delete_transient( self::BACKOFF_TRANSIENT );
		self::$memo = array();
		// Without a persistent object cache transients are rows of the
		// options table; the version bump has made them unreachable already.
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery -- bulk delete of our own transients.
		$wpdb->query(
			$wpdb->prepare(
				"DELETE FROM {$wpdb->options} WHERE option_name LIKE %s OR option_name LIKE %s",
				$wpdb->esc_like( '_transient_' . self::CACHE_PREFIX ) . '%',
				$wpdb->esc_like( '_transient_timeout_' . self::CACHE_PREFIX ) . '%'
			)
		);
	}

	/**
	 * Keeps the number of cached responses in the options table at most
	 * MAX_ENTRIES (filter listgate_cache_max_entries) by deleting the ones
	 * that expire first (the least recently refreshed; expired ones
	 * included). Called after a new response is stored, so it runs at most
	 * once per API call. With a persistent object cache transients are not
	 * rows of the options table, and the cache's own memory limit bounds
	 * them.
	 *
	 * @return void
	 */
	private static function prune() {
		global $wpdb;
		if ( wp_using_ext_object_cache() ) {
			return;
		}
		/**
		 * Filters how many Listgate responses are kept in the options table.
		 *
		 * @param int $max Default 500; at least 1.
		 */
		$max  = max( 1, (int) apply_filters( 'listgate_cache_max_entries', self::MAX_ENTRIES ) );
		$like = $wpdb->esc_like( '_transient_timeout_' . self::CACHE_PREFIX ) . '%';
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery -- counting our own transients.
		$count = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$wpdb->options} WHERE option_name LIKE %s", $like ) );
		if ( $count <= $max ) {
			return;
		}
		// phpcs:ignore WordPress.DB.DirectDatabaseQuery -- the oldest of our own transients.
		$names = $wpdb->get_col(
			$wpdb->prepare(
				"SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE %s ORDER BY CAST( option_value AS UNSIGNED ), option_id LIMIT %d",
				$like,
				$count - $max
			)
		);
		foreach ( $names as $name ) {
			delete_transient( substr( $name, strlen( '_transient_timeout_' ) ) );
		}
	}

	/**
	 * The current cache version.
	 *
	 * @return int
	 */
	public static function cache_version() {
		return max( 1, (int) get_option( 'listgate_cache_version', 1 ) );
	}

	/**
	 * The transient name of a request's cached response.
	 *
	 * @param string $path  Path below /v1.
	 * @param array  $query Cleaned query.
	 * @return string
	 */
	private static function cache_key( $path, $query ) {
		$parts = array(
			self::cache_version(),
			listgate_base_url(),
			(string) get_option( 'listgate_site_id', '' ),
			$path,
			self::canonical_query( $query ),
		);
		return self::CACHE_PREFIX . md5( implode( '|', $parts ) );
	}

	/**
	 * Drops empty values and turns the others into strings.
	 *
	 * @param array $query Query parameters.
	 * @return array
	 */
	private static function clean_query( $query ) {
		$out = array();
		foreach ( (array) $query as $name => $value ) {
			if ( null === $value || '' === $value || is_array( $value ) ) {
				continue;
			}
			$out[ (string) $name ] = (string) $value;
		}
		ksort( $out );
		return $out;
	}

	/**
	 * The query string, parameters sorted by name.
	 *
	 * @param array $query Query parameters.
	 * @return string
	 */
	private static function canonical_query( $query ) {
		$query = self::clean_query( $query );
		return http_build_query( $query, '', '&', PHP_QUERY_RFC3986 );
	}

	/**
	 * The freshness of a response.
	 *
	 * @param array  $headers Response headers (lower-case names).
	 * @param string $path    Path below /v1.
	 * @param array  $query   Query.
	 * @return int Seconds.
	 */
	private static function fresh_seconds( $headers, $path, $query ) {
		$seconds = self::DEFAULT_FRESH;
		$cc      = isset( $headers['cache-control'] ) ? $headers['cache-control'] : '';
		if ( preg_match( '/(?:^|[,\s])max-age\s*=\s*"?(\d+)/i', $cc, $m ) ) {
			$seconds = (int) $m[1];
		}
		$seconds = max( self::MIN_FRESH, $seconds );
		/**
		 * Filters how long a Listgate response is used without asking
		 * Listgate again.
		 *
		 * @param int    $seconds From the response's Cache-Control max-age (at least 5; 60 without one).
		 * @param string $path    The API path below /v1.
		 * @param array  $query   The query parameters.
		 */
		$seconds = (int) apply_filters( 'listgate_cache_fresh_seconds', $seconds, $path, $query );
		return max( 0, $seconds );
	}

	/**
	 * Remembers a 429's or 503's Retry-After (seconds or an HTTP date) so no
	 * request is sent before it passes: never longer than it says, and at
	 * most MAX_BACKOFF; DEFAULT_BACKOFF when there is none.
	 *
	 * @param array $headers Response headers.
	 * @return void
	 */
	private static function back_off( $headers ) {
		$raw  = isset( $headers['retry-after'] ) ? trim( $headers['retry-after'] ) : '';
		$wait = self::DEFAULT_BACKOFF;
		if ( '' !== $raw && ctype_digit( $raw ) ) {
			$wait = strlen( $raw ) > 6 ? self::MAX_BACKOFF : (int) $raw;
		} elseif ( '' !== $raw && false !== strtotime( $raw ) ) {
			$wait = strtotime( $raw ) - time();
		}
		if ( $wait <= 0 ) {
			return;
		}
		$wait = min( self::MAX_BACKOFF, $wait );
		set_transient( self::BACKOFF_TRANSIENT, time() + $wait, $wait );
	}

	/**
	 * The answer built from a cached entry.
	 *
	 * @param array $entry The entry.
	 * @param bool  $stale Whether it is served because Listgate could not answer.
	 * @return array See get().
	 */
	private static function from_entry( $entry, $stale ) {
		$data   = json_decode( $entry['body'], true );
		$status = (int) $entry['status'];
		if ( 404 === $status ) {
			return self::result( 404, null, 'not_found', $stale );
		}
		if ( ! is_array( $data ) ) {
			return self::result( 0, null, 'unavailable', $stale );
		}
		return self::result( $status, $data, '', $stale );
	}

	/**
	 * An answer of get().
	 *
	 * @param int        $status HTTP status of the data.
	 * @param array|null $data   The data.
	 * @param string     $error  The error, "" for none.
	 * @param bool       $stale  Whether the data is a stale copy.
	 * @return array
	 */
	private static function result( $status, $data, $error, $stale = false ) {
		return array(
			'status'  => $status,
			'data'    => $data,
			'stale'   => $stale,
			'error'   => $error,
			'details' => array(),
		);
	}

	/**
	 * The details of a VALIDATION_ERROR envelope.
	 *
	 * @param mixed $json The decoded body.
	 * @return array Field => message.
	 */
	public static function error_details( $json ) {
		if ( ! is_array( $json ) || ! isset( $json['error']['details'] ) || ! is_array( $json['error']['details'] ) ) {
			return array();
		}
		$out = array();
		foreach ( $json['error']['details'] as $field => $message ) {
			if ( is_scalar( $message ) ) {
				$out[ (string) $field ] = (string) $message;
			}
		}
		return $out;
	}

	/**
	 * The response's headers, names in lower case, one value each.
	 *
	 * @param array $response A wp_remote_request response.
	 * @return array
	 */
	private static function headers( $response ) {
		$out = array();
		foreach ( wp_remote_retrieve_headers( $response ) as $name => $value ) {
			$out[ strtolower( (string) $name ) ] = is_array( $value ) ? (string) reset( $value ) : (string) $value;
		}
		return $out;
	}

	/**
	 * Logs a failure: at most once per PHP request and once a minute, never
	 * with a key.
	 *
	 * @param string $message What happened.
	 * @return void
	 */
	private static function log( $message ) {
		if ( self::$logged || false !== get_transient( 'listgate_logged' ) ) {
			return;
		}
		self::$logged = true;
		set_transient( 'listgate_logged', 1, MINUTE_IN_SECONDS );
		// phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- an operator must learn that Listgate is failing.
		error_log( 'Listgate: ' . $message );
	}
}
