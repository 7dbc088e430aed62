<?php
/**
 * The single view of a listing: heading, price, features, description,
 * gallery, agents, inspections and the enquiry form.
 *
 * @package Listgate
 *
 * @var array $args "listing" (the listing), "back_url" (a link back to the
 *                  grid, "" for none), "enquiry" (the enquiry-form template's variables).
 */

defined( 'ABSPATH' ) || exit;

$listgate_listing     = $args['listing'];
$listgate_title       = Listgate_Format::title( $listgate_listing );
$listgate_address     = Listgate_Format::address( $listgate_listing );
$listgate_price       = Listgate_Format::price( $listgate_listing );
$listgate_images      = Listgate_Format::media( $listgate_listing, 'image' );
$listgate_floorplans  = Listgate_Format::media( $listgate_listing, 'floorplan' );
$listgate_description = Listgate_Format::text( $listgate_listing, array( 'description' ) );
$listgate_agents      = Listgate_Format::value( $listgate_listing, array( 'agents' ) );
$listgate_inspections = Listgate_Format::value( $listgate_listing, array( 'inspections' ) );
$listgate_auction     = Listgate_Format::text( $listgate_listing, array( 'auction', 'date' ) );
$listgate_land_area   = Listgate_Format::value( $listgate_listing, array( 'land', 'area' ) );
$listgate_floor_area  = Listgate_Format::value( $listgate_listing, array( 'building', 'area' ) );
$listgate_features    = array(
	'bedrooms'   => __( 'Bedrooms', 'listgate' ),
	'bathrooms'  => __( 'Bathrooms', 'listgate' ),
	'car_spaces' => __( 'Car spaces', 'listgate' ),
);
?>
<div class="listgate listgate-listing" data-listing-ref="<?php echo esc_attr( (string) Listgate_Format::ref( $listgate_listing ) ); ?>">
	<?php if ( '' !== $args['back_url'] ) : ?>
		<p><a class="listgate-back" href="<?php echo esc_url( $args['back_url'] ); ?>"><?php esc_html_e( '← Back to listings', 'listgate' ); ?></a></p>
	<?php endif; ?>

	<h2 class="listgate-listing-title"><?php echo esc_html( $listgate_title ); ?></h2>
	<?php if ( '' !== $listgate_address && $listgate_address !== $listgate_title ) : ?>
		<p class="listgate-listing-address"><?php echo esc_html( $listgate_address ); ?></p>
	<?php endif; ?>
	<?php if ( '' !== $listgate_price ) : ?>
		<p class="listgate-listing-price"><?php echo esc_html( $listgate_price ); ?></p>
	<?php endif; ?>

	<ul class="listgate-listing-features">
		<li class="listgate-listing-type"><?php echo esc_html( Listgate_Format::type_label( Listgate_Format::text( $listgate_listing, array( 'type' ) ) ) ); ?></li>
		<?php foreach ( $listgate_features as $listgate_name => $listgate_label ) : ?>
			<?php $listgate_count = Listgate_Format::feature( $listgate_listing, $listgate_name ); ?>
			<?php if ( null !== $listgate_count ) : ?>
				<li class="listgate-<?php echo esc_attr( str_replace( '_', '-', $listgate_name ) ); ?>"><?php echo esc_html( $listgate_label . ': ' . number_format_i18n( $listgate_count ) ); ?></li>
			<?php endif; ?>
		<?php endforeach; ?>
		<?php if ( is_numeric( $listgate_land_area ) ) : ?>
			<li class="listgate-land-area">
				<?php
				echo esc_html( __( 'Land:', 'listgate' ) . ' ' . Listgate_Format::area( $listgate_land_area, Listgate_Format::text( $listgate_listing, array( 'land', 'unit' ) ) ) );
				?>
			</li>
		<?php endif; ?>
		<?php if ( is_numeric( $listgate_floor_area ) ) : ?>
			<li class="listgate-floor-area">
				<?php
				echo esc_html( __( 'Floor area:', 'listgate' ) . ' ' . Listgate_Format::area( $listgate_floor_area, Listgate_Format::text( $listgate_listing, array( 'building', 'unit' ) ) ) );
				?>
			</li>
		<?php endif; ?>
	</ul>

	<?php if ( ! empty( $listgate_images ) ) : ?>
		<div class="listgate-gallery">
			<?php foreach ( $listgate_images as $listgate_i => $listgate_image ) : ?>
				<img src="<?php echo esc_url( Listgate_Format::text( $listgate_image, array( 'url' ) ) ); ?>"
					alt="<?php echo esc_attr( sprintf( /* translators: 1: listing title, 2: photo number. */ __( '%1$s, photo %2$d', 'listgate' ), $listgate_title, $listgate_i + 1 ) ); ?>"
					<?php echo 0 === $listgate_i ? '' : 'loading="lazy"'; ?> decoding="async">
			<?php endforeach; ?>
		</div>
	<?php endif; ?>

	<?php if ( '' !== $listgate_description ) : ?>
		<div class="listgate-description"><?php echo wp_kses_post( wpautop( esc_html( $listgate_description ) ) ); ?></div>
	<?php endif; ?>

	<?php if ( ! empty( $listgate_floorplans ) ) : ?>
		<h3><?php esc_html_e( 'Floor plans', 'listgate' ); ?></h3>
		<div class="listgate-floorplans">
			<?php foreach ( $listgate_floorplans as $listgate_plan ) : ?>
				<img src="<?php echo esc_url( Listgate_Format::text( $listgate_plan, array( 'url' ) ) ); ?>" alt="<?php esc_attr_e( 'Floor plan', 'listgate' ); ?>" loading="lazy" decoding="async">
			<?php endforeach; ?>
		</div>
	<?php endif; ?>

	<?php if ( '' !== $listgate_auction ) : ?>
		<p class="listgate-auction"><?php echo esc_html( __( 'Auction:', 'listgate' ) . ' ' . Listgate_Format::datetime( $listgate_auction ) ); ?></p>
	<?php endif; ?>

	<h3><?php esc_html_e( 'Inspections', 'listgate' ); ?></h3>
	<ul class="listgate-inspections">
		<?php if ( empty( $listgate_inspections ) || ! is_array( $listgate_inspections ) ) : ?>
			<li class="listgate-inspections-none"><?php esc_html_e( 'By appointment: please contact the agent.', 'listgate' ); ?></li>
		<?php else : ?>
			<?php foreach ( $listgate_inspections as $listgate_inspection ) : ?>
				<?php
				$listgate_starts = Listgate_Format::text( $listgate_inspection, array( 'starts_at' ) );
				$listgate_ends   = Listgate_Format::text( $listgate_inspection, array( 'ends_at' ) );
				if ( '' === $listgate_starts ) {
					continue;
				}
				?>
				<li>
					<time datetime="<?php echo esc_attr( $listgate_starts ); ?>"><?php echo esc_html( Listgate_Format::datetime( $listgate_starts ) ); ?></time>
					<?php if ( '' !== $listgate_ends ) : ?>
						– <time datetime="<?php echo esc_attr( $listgate_ends ); ?>"><?php echo esc_html( Listgate_Format::datetime( $listgate_ends, get_option( 'time_format', 'g:i a' ) ) ); ?></time>
					<?php endif; ?>
				</li>
			<?php endforeach; ?>
		<?php endif; ?>
	</ul>

	<h3><?php esc_html_e( 'Agents', 'listgate' ); ?></h3>
	<ul class="listgate-agents">
		<?php foreach ( is_array( $listgate_agents ) ? $listgate_agents : array() as $listgate_agent ) : ?>
			<?php
			$listgate_email  = Listgate_Format::text( $listgate_agent, array( 'email' ) );
			$listgate_phones = array_filter(
				array(
					Listgate_Format::text( $listgate_agent, array( 'phones', 'mobile' ) ),
					Listgate_Format::text( $listgate_agent, array( 'phones', 'office' ) ),
				)
			);
			?>
			<li class="listgate-agent">
				<span class="listgate-agent-name"><?php echo esc_html( Listgate_Format::text( $listgate_agent, array( 'name' ) ) ); ?></span>
				<?php foreach ( $listgate_phones as $listgate_phone ) : ?>
					<a class="listgate-agent-phone" href="<?php echo esc_url( 'tel:' . preg_replace( '/[^0-9+]/', '', $listgate_phone ), array( 'tel' ) ); ?>"><?php echo esc_html( $listgate_phone ); ?></a>
				<?php endforeach; ?>
				<?php if ( '' !== $listgate_email && is_email( $listgate_email ) ) : ?>
					<a class="listgate-agent-email" href="<?php echo esc_url( 'mailto:' . $listgate_email, array( 'mailto' ) ); ?>"><?php echo esc_html( $listgate_email ); ?></a>
				<?php endif; ?>
			</li>
		<?php endforeach; ?>
	</ul>

	<?php listgate_template( 'enquiry-form', $args['enquiry'] ); ?>
</div>
