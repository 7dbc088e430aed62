<?php
/**
 * Plugin Name:       Listgate
 * Plugin URI:        https://github.com/listgate/listgate
 * Description:       Shows your agency's property listings from Listgate on your WordPress site, with search filters, single listing pages and an enquiry form that sends leads to Listgate.
 * Version:           1.2.0
 * Requires at least: 6.1
 * Requires PHP:      8.1
 * Author:            Listgate
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       listgate
 * Domain Path:       /languages
 *
 * @package Listgate
 */

defined( 'ABSPATH' ) || exit;

/**
 * The plugin's version; sent to Listgate when pairing and in the User-Agent.
 */
define( 'LISTGATE_VERSION', '1.2.0' );

/**
 * The main plugin file.
 */
define( 'LISTGATE_FILE', __FILE__ );

/**
 * The plugin's directory, with a trailing slash.
 */
define( 'LISTGATE_DIR', plugin_dir_path( __FILE__ ) );

require_once LISTGATE_DIR . 'includes/functions.php';
require_once LISTGATE_DIR . 'includes/class-listgate-client.php';
require_once LISTGATE_DIR . 'includes/class-listgate-throttle.php';
require_once LISTGATE_DIR . 'includes/class-listgate-pairing.php';
require_once LISTGATE_DIR . 'includes/class-listgate-settings.php';
require_once LISTGATE_DIR . 'includes/class-listgate-format.php';
require_once LISTGATE_DIR . 'includes/class-listgate-filters.php';
require_once LISTGATE_DIR . 'includes/class-listgate-shortcodes.php';
require_once LISTGATE_DIR . 'includes/class-listgate-enquiry.php';
require_once LISTGATE_DIR . 'includes/class-listgate-views.php';

/**
 * Loads the plugin's translations.
 *
 * @return void
 */
function listgate_load_textdomain() {
	load_plugin_textdomain( 'listgate', false, dirname( plugin_basename( LISTGATE_FILE ) ) . '/languages' );
}
add_action( 'init', 'listgate_load_textdomain' );

/**
 * Registers every hook of the plugin.
 *
 * @return void
 */
function listgate_boot() {
	Listgate_Pairing::register();
	Listgate_Settings::register();
	Listgate_Shortcodes::register();
	Listgate_Enquiry::register();
	Listgate_Views::register();
}
add_action( 'plugins_loaded', 'listgate_boot' );
