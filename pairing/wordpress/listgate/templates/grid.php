<?php
/**
 * A grid of listing cards.
 *
 * @package Listgate
 *
 * @var array $args "listings" (array of listings), "class" (the grid's
 *                  classes), "link_base" (the URL cards add lg_listing to).
 */

defined( 'ABSPATH' ) || exit;
?>
<div class="<?php echo esc_attr( $args['class'] ); ?>">
	<?php
	foreach ( $args['listings'] as $listgate_listing ) {
		listgate_template(
			'card',
			array(
				'listing' => $listgate_listing,
				'url'     => add_query_arg( 'lg_listing', Listgate_Format::ref( $listgate_listing ), $args['link_base'] ),
			)
		);
	}
	?>
</div>
