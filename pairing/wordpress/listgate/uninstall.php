<?php
/**
 * Removes everything the plugin stored: its options and transients. When
 * the site is still paired, it first asks Listgate to revoke its key
 * (DELETE /v1/pairing), so no unused key is left behind.
 *
 * @package Listgate
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

/**
 * Revokes the paired key (best effort) and deletes the options and
 * transients of the current site.
 *
 * @return void
 */
function listgate_uninstall_site() {
	global $wpdb;

	$base = untrailingslashit( (string) get_option( 'listgate_base_url', '' ) );
	$key  = (string) get_option( 'listgate_api_key', '' );
	if ( str_ends_with( strtolower( $base ), '/v1' ) ) {
		$base = substr( $base, 0, -3 );
	}
	if ( '' !== $base && '' !== $key && preg_match( '#^https?://#i', $base ) ) {
		wp_remote_request(
			$base . '/v1/pairing',
			array(
				'method'      => 'DELETE',
				'timeout'     => 5,
				'redirection' => 0,
				'headers'     => array(
					'Accept'        => 'application/json',
					'Authorization' => 'Bearer ' . $key,
				),
			)
		);
	}

	$options = array(
		'listgate_base_url',
		'listgate_api_key',
		'listgate_site_id',
		'listgate_key_id',
		'listgate_scopes',
		'listgate_lead_key',
		'listgate_cache_version',
		'listgate_throttle',
		'listgate_beacon_id',
		'listgate_views_enabled',
	);
	foreach ( $options as $option ) {
		delete_option( $option );
	}

	// phpcs:ignore WordPress.DB.DirectDatabaseQuery -- bulk delete of the plugin's own transients.
	$wpdb->query(
		$wpdb->prepare(
			"DELETE FROM {$wpdb->options} WHERE option_name LIKE %s OR option_name LIKE %s",
			$wpdb->esc_like( '_transient_listgate_' ) . '%',
			$wpdb->esc_like( '_transient_timeout_listgate_' ) . '%'
		)
	);
	// With a persistent object cache, transients live there: drop the known ones.
	foreach ( array( 'listgate_pairing', 'listgate_pairing_outcome', 'listgate_backoff', 'listgate_logged' ) as $transient ) {
		delete_transient( $transient );
	}
}

if ( is_multisite() ) {
	foreach ( get_sites( array( 'fields' => 'ids' ) ) as $listgate_blog_id ) {
		switch_to_blog( $listgate_blog_id );
		listgate_uninstall_site();
		restore_current_blog();
	}
} else {
	listgate_uninstall_site();
}
